import type { ClientService, Principal } from "../clients/client.service";
import { AppError } from "../errors";
import type { RateLimiter } from "./rate-limit";

/** The key from an `Authorization: Bearer <key>` value; undefined when absent, an error when malformed. */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  const match = /^Bearer\s+(\S{16,256})\s*$/i.exec(header);
  if (!match) throw new AppError("UNAUTHENTICATED", 'The Authorization header must be "Bearer <API key>"');
  return match[1];
}

/**
 * Resolves the caller (or null without a key) and charges its rate limit. An unknown or revoked key
 * is refused outright rather than treated as anonymous.
 */
export async function authenticate(header: string | undefined, clients: ClientService, limiter: RateLimiter): Promise<Principal | null> {
  const key = bearerKey(header);
  if (key === undefined) return null;
  const principal = await clients.authenticate(key);
  if (!principal) throw new AppError("UNAUTHENTICATED", "The API key is unknown or revoked");
  limiter.take(principal.keyId);
  return principal;
}
