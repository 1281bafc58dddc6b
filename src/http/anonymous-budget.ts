import { createAddressBuckets, createSharedAddressBuckets } from "./address-buckets";
import { type BucketRate, refuseIfWaiting, type SharedBucketRate } from "./rate-limit";

/**
 * What a GraphQL request over HTTP without an API key spends: one token of its client address's
 * budget (IPv6 by /64, as the failed-authentication budget). A request with a key spends the key's
 * rate limit instead; without this budget, one address could send unkeyed documents without bound.
 */
export interface AnonymousBudget {
  /** Spends one token of the address's budget, or throws (rejects with) RATE_LIMITED when none is left. */
  spend(address: string): void | Promise<void>;
}

const overLimit = (perSecond: number) =>
  `Too many GraphQL requests without an API key from this address (at most ${perSecond} a second)`;

/** The budget in this process's memory: `perSecond` requests a second on average, `burst` at once; `perSecond` 0 turns it off. */
export function createAnonymousBudget({ perSecond, burst, now }: BucketRate): AnonymousBudget {
  const buckets = createAddressBuckets({ perSecond, burst, now });
  const refusal = overLimit(perSecond);
  return { spend: (address) => refuseIfWaiting(buckets.take(address), refusal) };
}

/** The same budget counted in Redis, one for every instance; this instance's own buckets decide while Redis is unavailable. */
export function createSharedAnonymousBudget({ perSecond, burst, store }: SharedBucketRate): AnonymousBudget {
  const buckets = createSharedAddressBuckets({
    perSecond,
    burst,
    store,
    limit: "anonymous",
    keyPrefix: "cgw:limits:anonymous",
  });
  const refusal = overLimit(perSecond);
  return { spend: async (address) => refuseIfWaiting(await buckets.take(address), refusal) };
}
