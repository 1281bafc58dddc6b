// The schedule's syntax and default (DELIVERY_RETRY_SCHEDULE) are in domain/retry-schedule.ts.

/** A receiver's Retry-After is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * The wait before retry number `retry` (1-based), with ±20 % jitter so that receivers coming back
 * are not hit by every waiting delivery at the same instant, and never shorter than the receiver's
 * Retry-After.
 */
export function retryDelayMs(
  schedule: readonly number[],
  retry: number,
  retryAfterMs: number | null,
  random = Math.random,
): number {
  const base = schedule[Math.min(retry, schedule.length) - 1]!;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return retryAfterMs === null ? jittered : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
