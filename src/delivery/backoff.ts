/** The default retry schedule: the first retry within 10 s, then longer waits, about 24 h in all. */
export const DEFAULT_RETRY_SCHEDULE = "5s,30s,2m,10m,30m,1h,2h,4h,6h,10h";
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
/** A receiver's Retry-After is honoured up to this long. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** "5s,30s,2m" → [5000, 30000, 120000]; null when malformed. */
export function parseSchedule(text: string): number[] | null {
  const parts = text.split(",").map((p) => p.trim());
  const delays = parts.map((p) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(p);
    return match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  });
  return delays.length > 0 && delays.every((d) => Number.isFinite(d) && d > 0) ? delays : null;
}

/**
 * The wait before retry number `retry` (1-based), with ±20 % jitter so that receivers coming back
 * are not hit by every waiting delivery at the same instant, and never shorter than the receiver's
 * Retry-After.
 */
export function retryDelayMs(schedule: readonly number[], retry: number, retryAfterMs: number | null, random = Math.random): number {
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
