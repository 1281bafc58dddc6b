import { createAddressBuckets, createSharedAddressBuckets } from "./address-buckets";
import { type BucketRate, refuseIfWaiting, type SharedBucketRate } from "./rate-limit";

/** What authentication needs of a budget of failed authentications per client address. */
export interface AuthFailureBudget {
  /** Spends one attempt of the address's budget, or throws (rejects with) RATE_LIMITED when none is left. */
  spend(address: string): void | Promise<void>;
  /** Gives back an attempt spent on a key that turned out valid. */
  refund(address: string): void;
}

const overLimit = (perSecond: number) =>
  `Too many failed authentications from this address (at most ${perSecond} a second)`;

/**
 * A budget of failed authentications (unknown, revoked or malformed keys) per client address, in
 * this process's memory: `perSecond` failures a second on average, `burst` at once; `perSecond` 0
 * turns it off. An unknown key costs a database read, and unknown keys are not remembered (a key
 * issued later must work at once), so this is what bounds the reads one address can cause.
 */
export function createAuthFailureBudget({ perSecond, burst, now }: BucketRate) {
  const buckets = createAddressBuckets({ perSecond, burst, now });
  const refusal = overLimit(perSecond);
  return {
    /** Spends one attempt of the address's budget, or throws RATE_LIMITED when none is left. */
    spend(address: string): void {
      refuseIfWaiting(buckets.take(address), refusal);
    },
    /** Gives back an attempt spent on a key that turned out valid. */
    refund(address: string): void {
      buckets.giveBack(address);
    },
    /** How many addresses have a budget kept (for tests of the bound). */
    addresses: buckets.size,
  };
}

/** The same budget counted in Redis, one for every instance; this instance's own buckets decide while Redis is unavailable. */
export function createSharedAuthFailureBudget({ perSecond, burst, store }: SharedBucketRate): AuthFailureBudget {
  const buckets = createSharedAddressBuckets({
    perSecond,
    burst,
    store,
    limit: "auth_failures",
    keyPrefix: "cgw:limits:auth-failures",
  });
  const refusal = overLimit(perSecond);
  return {
    spend: async (address) => refuseIfWaiting(await buckets.take(address), refusal),
    refund: (address) => buckets.giveBack(address),
  };
}
