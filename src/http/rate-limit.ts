import { AppError } from "../errors";
import { createSharedBuckets } from "./shared-buckets";
import type { SharedLimitStore } from "./shared-limits";

/**
 * Token buckets by name, in this process's memory: each name may spend `perSecond` tokens a second
 * on average and `burst` at once; `perSecond` 0 turns them off. At most `maxNames` buckets are kept,
 * the least recently used dropped first: a bucket untouched for `burst / perSecond` seconds is full
 * again and says nothing, so a dropped one loses a debt only when more than `maxNames` names spent
 * within that time.
 */
export function createTokenBuckets({
  perSecond,
  burst,
  maxNames,
  // A monotonic clock: a wall clock stepped back (NTP) would drain every bucket for as long.
  now = () => performance.now(),
}: BucketRate & { maxNames: number }) {
  const buckets = new Map<string, { tokens: number; at: number }>();

  /** The name's bucket refilled to now, moved to the most recently used end. */
  function bucketOf(name: string) {
    const t = now();
    let bucket = buckets.get(name);
    if (bucket) {
      buckets.delete(name);
      bucket.tokens = Math.min(burst, bucket.tokens + (Math.max(0, t - bucket.at) / 1000) * perSecond);
      bucket.at = t;
    } else {
      bucket = { tokens: burst, at: t };
      if (buckets.size >= maxNames) buckets.delete(buckets.keys().next().value!);
    }
    buckets.set(name, bucket);
    return bucket;
  }

  return {
    /** Takes one token: 0 when taken, else the whole seconds (at least 1) until one is free. */
    take(name: string): number {
      if (perSecond <= 0) return 0;
      const bucket = bucketOf(name);
      if (bucket.tokens < 1) return Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
      bucket.tokens -= 1;
      return 0;
    },
    /** Returns a token taken for something that, in the end, did not count. */
    giveBack(name: string): void {
      if (perSecond <= 0) return;
      const bucket = bucketOf(name);
      bucket.tokens = Math.min(burst, bucket.tokens + 1);
    },
    /** How many buckets are kept (for tests of the bound). */
    size: () => buckets.size,
  };
}

/** A budget's rate: `perSecond` tokens a second on average, `burst` at once; `perSecond` 0 turns it off. */
export interface BucketRate {
  perSecond: number;
  burst: number;
  /** A monotonic clock in milliseconds (tests set it). */
  now?: () => number;
}

/** A budget's rate, counted in Redis through `store`. */
export interface SharedBucketRate {
  perSecond: number;
  burst: number;
  store: SharedLimitStore;
}

/** API keys whose request buckets are kept; past it the least recently used is dropped. */
const MAX_KEYS = 100_000;

/** A per-key request rate limit, as authentication and the websockets use it. */
export interface RateLimiter {
  /** Takes one token for `key`, or throws (rejects with) RATE_LIMITED with the seconds until one is free. */
  take(key: string): void | Promise<void>;
  /** The same without waiting for anything (a websocket's messages); a shared limit may refuse a round trip late. */
  takeWithoutWaiting(key: string): void;
}

/**
 * A token bucket per API key, in this process's memory: each key may make `perSecond` requests a
 * second on average and `burst` at once. With several instances each enforces its own share
 * (`createSharedRateLimiter` shares one budget through Redis).
 */
export function createRateLimiter({ perSecond, burst, now }: BucketRate): RateLimiter & { take(key: string): void } {
  const buckets = createTokenBuckets({ perSecond, burst, maxNames: MAX_KEYS, now });
  const refusal = overLimit(perSecond);
  const take = (key: string) => refuseIfWaiting(buckets.take(key), refusal);
  return { take, takeWithoutWaiting: take };
}

/**
 * The per-key request rate limit counted in Redis, one budget for every instance (shared-buckets.ts
 * says how the bucket becomes a window there); this instance's own buckets decide while Redis is
 * unavailable.
 */
export function createSharedRateLimiter({ perSecond, burst, store }: SharedBucketRate): RateLimiter {
  const buckets = createSharedBuckets({
    store,
    limit: "requests",
    keyPrefix: "cgw:limits:requests",
    perSecond,
    burst,
    local: createTokenBuckets({ perSecond, burst, maxNames: MAX_KEYS }),
  });
  const refusal = overLimit(perSecond);
  return {
    take: async (key) => refuseIfWaiting(await buckets.take(key), refusal),
    takeWithoutWaiting: (key) => refuseIfWaiting(buckets.takeWithoutWaiting(key), refusal),
  };
}

const overLimit = (perSecond: number) => `This API key is over its limit of ${perSecond} requests a second`;

/** Throws RATE_LIMITED saying which limit and when to retry, unless a token was taken (`retryAfterSeconds` 0). */
export function refuseIfWaiting(retryAfterSeconds: number, limit: string): void {
  if (retryAfterSeconds > 0)
    throw new AppError("RATE_LIMITED", `${limit}; retry in ${retryAfterSeconds} s`, { retryAfterSeconds });
}
