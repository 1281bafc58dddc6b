import type { Logger } from "pino";
import type { ClaimedDelivery } from "./delivery.store";

/**
 * Claims the worker hands back unsent, released together: collected with `add`, sent as one release
 * by `flush`. A release that fails is only logged: those leases run out instead.
 */
export class GiveBacks {
  private collected: ClaimedDelivery[] = [];
  /** Releases under way; `settled()` waits for them, so the database is not closed under them. */
  private readonly underWay = new Set<Promise<void>>();

  constructor(
    private readonly deps: {
      release: (claims: ClaimedDelivery[]) => Promise<unknown>;
      /** A release succeeded: its deliveries are claimable again. */
      onReleased: () => void;
      log: Logger;
    },
  ) {}

  add(delivery: ClaimedDelivery): void {
    this.collected.push(delivery);
  }

  flush(): void {
    if (this.collected.length === 0) return;
    const claims = this.collected;
    this.collected = [];
    const done: Promise<void> = this.deps
      .release(claims)
      .then(
        () => this.deps.onReleased(),
        (error: unknown) =>
          this.deps.log.warn({ err: error }, "giving back deliveries failed; their leases will run out"),
      )
      .finally(() => this.underWay.delete(done));
    this.underWay.add(done);
  }

  /** Resolves when the releases under way now have ended. */
  async settled(): Promise<void> {
    await Promise.all(this.underWay);
  }
}
