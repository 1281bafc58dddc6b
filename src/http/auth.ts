import type { ClientService } from "../clients/client.service";
import type { Principal } from "../clients/principal";
import { AppError } from "../errors";
import type { AnonymousBudget } from "./anonymous-budget";
import type { AuthFailureBudget } from "./auth-failures";
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
 *
 * With `from`, failed authentications (malformed, unknown or revoked keys) are budgeted per client
 * address, in this order: a key remembered by the key cache is answered from it and never blocked
 * by its address's failures; any other key first spends one of the address's attempts — none left
 * is 429 without a database read — and the key lookup gives it back when the key is valid (or the
 * lookup itself failed), so only failures stay spent. Spending before the read, not after, also
 * bounds the lookups one address can have under way at once.
 */
export async function authenticate(
  header: string | undefined,
  clients: ClientService,
  limiter: RateLimiter,
  from?: { address: string; failures: AuthFailureBudget },
): Promise<Principal | null> {
  let key: string | undefined;
  try {
    key = bearerKey(header);
  } catch (error) {
    await from?.failures.spend(from.address); // RATE_LIMITED instead, once the budget is spent
    throw error;
  }
  if (key === undefined) return null;
  let refund: (() => void) | undefined; // set once an attempt is spent on this key
  const spend =
    from &&
    (async () => {
      await from.failures.spend(from.address);
      refund = () => from.failures.refund(from.address);
    });
  let principal: Principal | null;
  try {
    principal = await clients.authenticate(key, spend);
  } catch (error) {
    refund?.(); // the database failed, not the key
    throw error;
  }
  if (!principal) throw unknownKey();
  refund?.();
  await limiter.take(principal.keyId);
  return principal;
}

/**
 * Charges a request whose caller matters only to some of its parts (GraphQL over HTTP: station reads
 * need no key) before any of it is read, so that every request spends a budget: with a key, the key
 * is authenticated (its rate limit charged once, its failure budget as `authenticate` says); without
 * one, or with one that does not authenticate, the address's anonymous budget. Throws (rejects
 * with) RATE_LIMITED only. `caller` holds the outcome of authenticating the key, a failure included,
 * for the parts that need a caller: an unknown key still fails only those, as before.
 */
export async function admitCaller(
  header: string | undefined,
  address: string,
  authenticate: (header: string | undefined, address: string) => Promise<Principal | null>,
  anonymous: AnonymousBudget,
): Promise<{ caller: Promise<Principal | null> }> {
  if (header === undefined || header === "") {
    await anonymous.spend(address);
    return { caller: Promise.resolve(null) };
  }
  const caller = authenticate(header, address);
  try {
    await caller;
  } catch (error) {
    if (error instanceof AppError && error.code === "RATE_LIMITED") throw error;
    await anonymous.spend(address);
  }
  return { caller };
}
