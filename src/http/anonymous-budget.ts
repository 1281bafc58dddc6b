import { AppError } from "../errors";
import { budgetNameOf } from "./auth-failures";
import { createTokenBuckets } from "./rate-limit";
import { createSharedBuckets } from "./shared-buckets";
import type { SharedLimitStore } from "./shared-limits";

/** Client addresses whose budgets are kept; past it the least recently used is dropped. */
const MAX_ADDRESSES = 100_000;

/**
 * What a GraphQL request over HTTP without an API key spends: one token of its client address's
 * budget (IPv6 by /64, as the failed-authentication budget). A request with a key spends the key's
 * rate limit instead; without this budget, one address could send unkeyed documents without bound.
 */
export interface AnonymousBudget {
  /** Spends one token of the address's budget, or throws (rejects with) RATE_LIMITED when none is left. */
  spend(address: string): void | Promise<void>;
}

/** The budget in this process's memory: `perSecond` requests a second on average, `burst` at once; `perSecond` 0 turns it off. */
export function createAnonymousBudget({
  perSecond,
  burst,
  now,
}: {
  perSecond: number;
  burst: number;
  now?: () => number;
}): AnonymousBudget {
  const buckets = createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES, ...(now ? { now } : {}) });
  return { spend: (address) => refuseIfWaiting(buckets.take(budgetNameOf(address)), perSecond) };
}

/**
 * The same budget counted in Redis, one for every instance (shared-buckets.ts says how the bucket
 * becomes a window there); this instance's own buckets decide while Redis is unavailable.
 */
export function createSharedAnonymousBudget({
  perSecond,
  burst,
  store,
}: {
  perSecond: number;
  burst: number;
  store: SharedLimitStore;
}): AnonymousBudget {
  const buckets = createSharedBuckets({
    store,
    limit: "anonymous",
    keyPrefix: "cgw:limits:anonymous",
    perSecond,
    burst,
    local: createTokenBuckets({ perSecond, burst, maxNames: MAX_ADDRESSES }),
  });
  return { spend: async (address) => refuseIfWaiting(await buckets.take(budgetNameOf(address)), perSecond) };
}

function refuseIfWaiting(retryAfterSeconds: number, perSecond: number): void {
  if (retryAfterSeconds > 0) {
    throw new AppError(
      "RATE_LIMITED",
      `Too many GraphQL requests without an API key from this address (at most ${perSecond} a second); retry in ${retryAfterSeconds} s`,
      { retryAfterSeconds },
    );
  }
}
