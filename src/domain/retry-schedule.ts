/** The default retry schedule: the first retry within 10 s, then longer waits, about 24 h in all. */
export const DEFAULT_RETRY_SCHEDULE = "5s,30s,2m,10m,30m,1h,2h,4h,6h,10h";
const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** "5s,30s,2m" → [5000, 30000, 120000]; null when malformed. */
export function parseSchedule(text: string): number[] | null {
  const parts = text.split(",").map((p) => p.trim());
  const delays = parts.map((p) => {
    const match = /^(\d+)(ms|s|m|h)$/.exec(p);
    return match ? Number(match[1]) * UNITS[match[2]!]! : NaN;
  });
  return delays.length > 0 && delays.every((d) => Number.isFinite(d) && d > 0) ? delays : null;
}
