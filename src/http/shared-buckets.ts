import { RateLimiterCompatibleAbstract, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { LimitName, SharedLimitStore } from "./shared-limits";

/** This instance's own budgets (rate-limit.ts `createTokenBuckets`): 0 when a token was taken, else the seconds until one is free. */
export interface LocalBuckets {
  take(name: string): number;
  giveBack(name: string): void;
}

export interface SharedBuckets {
  /** Takes one token of `name` from the budget all instances share: 0 when taken, else the whole seconds (at least 1) until one is free. */
  take(name: string): Promise<number>;
  /**
   * The same without waiting for Redis: refused only when an earlier answer for `name` said it is over
   * (until that answer's wait is over); the token is charged to the shared budget in the background.
   * For callers that cannot wait (a websocket's messages), at the price of answering a key's excess a
   * round trip late.
   */
  takeWithoutWaiting(name: string): number;
  /** Returns a token taken for something that, in the end, did not count. */
  giveBack(name: string): void;
}

/**
 * A token bucket's settings as the fixed window rate-limiter-flexible counts in Redis: `perSecond ×
 * seconds` tokens per window of `burst / perSecond` seconds, rounded to whole seconds (at least one,
 * the library's smallest window). The average rate is the same; the most a name can spend at once is
 * about `burst` when a window starts, and up to twice that around the end of one and the start of the next.
 */
export function sharedWindowOf(perSecond: number, burst: number): { points: number; seconds: number } {
  const seconds = Math.max(1, Math.round(burst / perSecond));
  return { points: Math.max(1, Math.round(perSecond * seconds)), seconds };
}

const COMMAND_FAILED = "a redis command for limits failed or was refused (connection not ready)";

/** Names kept with an answer that said "over" (`takeWithoutWaiting`); past it the oldest is dropped. */
const MAX_REFUSED_NAMES = 10_000;

/**
 * Budgets by name counted in Redis with rate-limiter-flexible, so that every instance spends from one
 * budget; `perSecond` 0 turns them off. While the store is not shared (Redis down or failing), or
 * when a command fails (the library then calls its `insuranceLimiter`), this instance's own buckets
 * decide, and each such decision is counted as a fallback of `limit`. What was spent in either place
 * is not copied to the other when Redis comes and goes.
 */
export function createSharedBuckets({
  store,
  limit,
  keyPrefix,
  perSecond,
  burst,
  local,
}: {
  store: SharedLimitStore;
  limit: LimitName;
  keyPrefix: string;
  perSecond: number;
  burst: number;
  local: LocalBuckets;
}): SharedBuckets {
  if (perSecond <= 0) return { take: () => Promise.resolve(0), takeWithoutWaiting: () => 0, giveBack: () => {} };
  const { points, seconds } = sharedWindowOf(perSecond, burst);
  const limiter = new RateLimiterRedis({
    storeClient: store.redis,
    keyPrefix,
    points,
    duration: seconds,
    // Not "ready" (down, reconnecting): straight to the insurance, without a command.
    rejectIfRedisNotReady: true,
    insuranceLimiter: new LocalBucketsLimiter(local, keyPrefix, () => store.fellBack(limit, new Error(COMMAND_FAILED))),
  });
  const refusedUntil = new Map<string, number>();

  async function take(name: string): Promise<number> {
    if (!store.shared()) {
      store.fellBack(limit);
      return local.take(name);
    }
    try {
      await limiter.consume(name);
      return 0;
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes) return secondsOf(outcome.msBeforeNext);
      // The insurance itself failed (it does not): this instance decides, whatever happened.
      store.fellBack(limit, outcome);
      return local.take(name);
    }
  }

  return {
    take,
    takeWithoutWaiting(name) {
      const until = refusedUntil.get(name);
      if (until !== undefined) {
        const left = until - performance.now();
        if (left > 0) return secondsOf(left);
        refusedUntil.delete(name);
      }
      if (!store.shared()) {
        store.fellBack(limit);
        return local.take(name);
      }
      void take(name).then((wait) => {
        if (wait === 0) return;
        refusedUntil.delete(name);
        if (refusedUntil.size >= MAX_REFUSED_NAMES) refusedUntil.delete(refusedUntil.keys().next().value!);
        refusedUntil.set(name, performance.now() + wait * 1000);
      });
      return 0;
    },
    giveBack(name) {
      if (!store.shared()) {
        local.giveBack(name);
        return;
      }
      // A failed command gives the token back to the local buckets (the insurance), never rejects.
      limiter.reward(name).catch(() => local.giveBack(name));
    },
  };
}

function secondsOf(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/**
 * This instance's token buckets in the shape rate-limiter-flexible accepts as an `insuranceLimiter`:
 * what the Redis limiter could not decide, they decide. Only consume and reward are used.
 */
class LocalBucketsLimiter extends RateLimiterCompatibleAbstract {
  override readonly keyPrefix: string;
  // Set by the Redis limiter to its own (no blocking, no evening out); the buckets have neither.
  override blockDuration = 0;
  override execEvenly = false;

  constructor(
    private readonly buckets: LocalBuckets,
    keyPrefix: string,
    private readonly onUse: () => void,
  ) {
    super();
    this.keyPrefix = keyPrefix;
  }

  override consume(key: string | number): Promise<RateLimiterRes> {
    this.onUse();
    const wait = this.buckets.take(String(key));
    // rate-limiter-flexible's contract: a refusal rejects with the RateLimiterRes saying how long to wait.
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors
    return wait > 0 ? Promise.reject(new RateLimiterRes(0, wait * 1000)) : Promise.resolve(new RateLimiterRes());
  }

  override reward(key: string | number): Promise<RateLimiterRes> {
    this.buckets.giveBack(String(key));
    return Promise.resolve(new RateLimiterRes());
  }

  override penalty(): Promise<RateLimiterRes> {
    return unused();
  }
  override get(): Promise<RateLimiterRes | null> {
    return unused();
  }
  override set(): Promise<RateLimiterRes> {
    return unused();
  }
  override block(): Promise<RateLimiterRes> {
    return unused();
  }
  override delete(): Promise<boolean> {
    return unused();
  }
}

function unused(): Promise<never> {
  return Promise.reject(new Error("not used by the gateway's limits"));
}
