import { AppError } from "../errors";

/**
 * A token bucket per API key, in this process's memory: each key may make `perSecond` requests a
 * second on average and `burst` at once. With several instances each enforces its own share.
 */
export function createRateLimiter({
  perSecond,
  burst,
  now = () => Date.now(),
}: {
  perSecond: number;
  burst: number;
  now?: () => number;
}) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** Takes one token for `key`, or throws RATE_LIMITED with the seconds until one is free. */
    take(key: string): void {
      if (perSecond <= 0) return;
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: burst, at: t };
      bucket.tokens = Math.min(burst, bucket.tokens + ((t - bucket.at) / 1000) * perSecond);
      bucket.at = t;
      if (bucket.tokens < 1) {
        buckets.set(key, bucket);
        const retryAfterSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond));
        throw new AppError(
          "RATE_LIMITED",
          `This API key is over its limit of ${perSecond} requests a second; retry in ${retryAfterSeconds} s`,
          { retryAfterSeconds },
        );
      }
      bucket.tokens -= 1;
      if (buckets.size > 100_000) buckets.clear();
      buckets.set(key, bucket);
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
