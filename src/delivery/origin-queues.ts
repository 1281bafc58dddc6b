import type { ClaimedDelivery } from "./delivery.store";

export interface Queued {
  delivery: ClaimedDelivery;
  /** The last instant (the worker's clock) at which its send may start and still end inside the lease. */
  startBy: number;
}

/**
 * The worker's claimed deliveries by origin: those waiting for a send slot, in claim order, and the
 * sends in flight. A slot is free while fewer than `concurrency` sends are in flight in all and fewer
 * than `perOrigin` to that origin. Only origins holding something are kept.
 */
export class OriginQueues {
  private readonly waiting = new Map<string, Queued[]>();
  private readonly sending = new Map<string, number>();
  private queuedCount = 0;
  private inFlightCount = 0;

  constructor(private readonly limits: { concurrency: number; perOrigin: number }) {}

  /** Deliveries waiting for a slot, over all origins. */
  get queued(): number {
    return this.queuedCount;
  }

  /** Sends in flight, over all origins. */
  get inFlight(): number {
    return this.inFlightCount;
  }

  inFlightTo(origin: string): number {
    return this.sending.get(origin) ?? 0;
  }

  /** What the worker holds for `origin`: waiting and in flight. */
  held(origin: string): number {
    return this.inFlightTo(origin) + (this.waiting.get(origin)?.length ?? 0);
  }

  /** Origins with deliveries waiting, oldest queue first; safe to iterate while taking from them. */
  waitingOrigins(): IterableIterator<string> {
    return this.waiting.keys();
  }

  /** Origins holding anything: those waiting first, then those only sending. */
  heldOrigins(): string[] {
    return [...new Set([...this.waiting.keys(), ...this.sending.keys()])];
  }

  /** Whether `origin`'s next waiting delivery may start now. */
  canStart(origin: string): boolean {
    return (
      this.waiting.has(origin) &&
      this.inFlightCount < this.limits.concurrency &&
      this.inFlightTo(origin) < this.limits.perOrigin
    );
  }

  push(queued: Queued): void {
    const origin = queued.delivery.origin;
    const queue = this.waiting.get(origin);
    if (queue) queue.push(queued);
    else this.waiting.set(origin, [queued]);
    this.queuedCount++;
  }

  /** Takes `origin`'s next waiting delivery off its queue (it then holds no slot until `started`). */
  takeNext(origin: string): Queued | undefined {
    const queue = this.waiting.get(origin);
    const next = queue?.shift();
    if (next) this.queuedCount--;
    if (queue?.length === 0) this.waiting.delete(origin);
    return next;
  }

  /** Takes everything waiting for `origin`, or for every origin when none is named. */
  takeAll(origin?: string): Queued[] {
    const origins = origin === undefined ? [...this.waiting.keys()] : [origin];
    const taken = origins.flatMap((o) => this.waiting.get(o) ?? []);
    for (const o of origins) this.waiting.delete(o);
    this.queuedCount -= taken.length;
    return taken;
  }

  /** A send to `origin` started: it holds a slot until `finished`. */
  started(origin: string): void {
    this.sending.set(origin, this.inFlightTo(origin) + 1);
    this.inFlightCount++;
  }

  finished(origin: string): void {
    this.inFlightCount--;
    const left = (this.sending.get(origin) ?? 1) - 1;
    if (left === 0) this.sending.delete(origin);
    else this.sending.set(origin, left);
  }
}
