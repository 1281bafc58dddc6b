import type { FastifyRequest } from "fastify";
import { type ClientService, type Principal, requireScope } from "../clients/client.service";
import type { Scope } from "../clients/credentials";
import { AppError } from "../errors";
import type { RateLimiter } from "./rate-limit";

/** Keys are 16 to 256 characters (generated ones are 47): anything else cannot be a key we issued. */
const KEY_LENGTH = { min: 16, max: 256 };

/**
 * The key from an `Authorization: Bearer <key>` value; undefined when absent. A header of another
 * form is malformed; a token that cannot be one of our keys (too short or long) is an unknown key,
 * said as such without a database lookup.
 */
export function bearerKey(header: string | undefined): string | undefined {
  if (header === undefined || header === "") return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new AppError("UNAUTHENTICATED", 'The Authorization header must be "Bearer <API key>"');
  const key = match[1]!;
  if (key.length < KEY_LENGTH.min || key.length > KEY_LENGTH.max) throw unknownKey();
  return key;
}

export const unknownKey = () => new AppError("UNAUTHENTICATED", "The API key is unknown or revoked");

/**
 * Resolves the caller (or null without a key) and charges its rate limit. An unknown or revoked key
 * is refused outright rather than treated as anonymous.
 */
export async function authenticate(
  header: string | undefined,
  clients: ClientService,
  limiter: RateLimiter,
): Promise<Principal | null> {
  const key = bearerKey(header);
  if (key === undefined) return null;
  const principal = await clients.authenticate(key);
  if (!principal) throw unknownKey();
  limiter.take(principal.keyId);
  return principal;
}

const callers = new WeakMap<FastifyRequest, Principal>();

/**
 * Route options that authenticate the caller and check its scope in `preValidation`, before the
 * route's schema looks at the request: a caller without a valid key or scope hears 401/403 (or 429)
 * whatever it sent, as when handlers checked keys before reading input. The handler gets the caller
 * from `callerOf`.
 */
export function keyed(
  authenticate: (request: FastifyRequest) => Promise<Principal | null>,
  ...scopes: [Scope, ...Scope[]]
): { preValidation: (request: FastifyRequest) => Promise<void> } {
  return {
    preValidation: async (request) => {
      callers.set(request, requireScope(await authenticate(request), ...scopes));
    },
  };
}

/** The caller `keyed` authenticated for this request. */
export function callerOf(request: FastifyRequest): Principal {
  const principal = callers.get(request);
  if (!principal) throw new Error(`${request.method} ${request.url}: the route authenticates no caller`);
  return principal;
}
