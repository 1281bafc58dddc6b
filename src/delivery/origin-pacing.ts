/**
 * Claimed deliveries an origin may hold ready, as a multiple of its concurrency, so a freed slot need
 * not wait for a claim query. Only for origins that answer quickly: a slow one would sit on claims
 * until they had to be given back.
 */
export const PREFETCH_FACTOR = 32;
export const FAST_ORIGIN_MS = 250;
/** How far, and how often at most, a saturated slow origin's due backlog is pushed back. */
export const SATURATED_DEFER_MS = 1_000;

/**
 * How fast each origin answers (a moving average of its sends' durations), and from that how many
 * claims it may hold and whether its backlog is pushed back. An origin not yet timed is neither fast
 * nor known to be slow.
 */
export class OriginPacing {
  private readonly averageMs = new Map<string, number>();
  /** When each saturated origin's backlog was last pushed back (the worker's clock). */
  private readonly deferredAt = new Map<string, number>();

  constructor(private readonly perOrigin: number) {}

  observe(origin: string, durationMs: number): void {
    this.averageMs.set(origin, 0.8 * (this.averageMs.get(origin) ?? durationMs) + 0.2 * durationMs);
  }

  isFast(origin: string): boolean {
    return (this.averageMs.get(origin) ?? Infinity) < FAST_ORIGIN_MS;
  }

  isKnownSlow(origin: string): boolean {
    return (this.averageMs.get(origin) ?? 0) >= FAST_ORIGIN_MS;
  }

  /** How many deliveries the worker may hold (waiting and in flight) for `origin`. */
  prefetchFor(origin: string): number {
    return this.perOrigin * (this.isFast(origin) ? PREFETCH_FACTOR : 1);
  }

  /**
   * Whether to push back the due backlog of `origin`, whose claims are full, at `now`: a slow origin's
   * backlog would sit at the front of every claim's scan (oldest first), so it is pushed back by
   * SATURATED_DEFER_MS, at most once per that time. Only an origin known to be slow with every slot
   * busy: a fast one works through its prefetched claims well within that time and would then idle.
   * Answering true marks it deferred at `now`.
   */
  takeDeferral(origin: string, inFlight: number, now: number): boolean {
    if (!this.isKnownSlow(origin) || inFlight < this.perOrigin) return false;
    if (now - (this.deferredAt.get(origin) ?? -Infinity) < SATURATED_DEFER_MS) return false;
    this.deferredAt.set(origin, now);
    return true;
  }

  /** Forgets the deferral times of origins no longer sending (their next saturation starts afresh). */
  forgetDeferralsUnless(sending: (origin: string) => boolean): void {
    for (const origin of this.deferredAt.keys()) if (!sending(origin)) this.deferredAt.delete(origin);
  }
}
