/**
 * Remembers the last claim that excluded origins and found nothing. Such a claim steps over the
 * excluded origins' whole due backlog in the database (on the embedded database, on the gateway's own
 * thread). While at least the same origins are excluded, the worker does not repeat it on the
 * wake-ups of this process's own ingestions (which come with every commit under load, and whose
 * deliveries for origins with room were handed over already): only once `pollMs` has passed since
 * it, or after `forget()` (a wake-up that may mean work for any origin: another process's commit, a
 * requeue, a give-back).
 */
export class FruitlessClaims {
  private last: { at: number; excluded: readonly string[] } | undefined;

  constructor(private readonly pollMs: number) {}

  /** How long a claim excluding `excluded` at `now` should wait (0: claim now). */
  waitBefore(excluded: readonly string[], now: number): number {
    if (!this.last) return 0;
    const waitMs = this.last.at + this.pollMs - now;
    if (waitMs <= 0) return 0;
    const excludedNow = new Set(excluded);
    return this.last.excluded.every((origin) => excludedNow.has(origin)) ? waitMs : 0;
  }

  /** The outcome of a claim started at `at` that excluded `excluded` and took `claimed` deliveries. */
  claimed(claimed: number, excluded: readonly string[], at: number): void {
    this.last = claimed === 0 && excluded.length > 0 ? { at, excluded } : undefined;
  }

  forget(): void {
    this.last = undefined;
  }
}
