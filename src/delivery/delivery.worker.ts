import type { Logger } from "pino";
import { retryDelayMs } from "./backoff";
import type { AttemptOutcome, ClaimedDelivery } from "./delivery.store";
import type { DeliveryOutcome } from "./delivery.metrics";
import type { SendResult } from "./sender";

export interface WorkerOptions {
  /** Sends in flight at once, over all origins. */
  concurrency: number;
  /** Sends in flight at once to one origin: a slow receiver holds at most this many. */
  perOrigin: number;
  /** How often to look for due deliveries when nothing woke the worker. */
  pollMs: number;
  /** How long a claim holds a delivery; MUST exceed the 10 s send timeout plus recording time. */
  leaseMs: number;
  /** Waits before each retry; a delivery is dead after schedule.length + 1 attempts. */
  retrySchedule: readonly number[];
}

/**
 * Claimed deliveries kept ready per origin, as a multiple of its concurrency, so a freed slot need
 * not wait for a claim query. Only for origins that answer quickly: a slow one would sit on claims
 * until their leases were half gone.
 */
const PREFETCH_FACTOR = 16;
const FAST_ORIGIN_MS = 250;
/** Outcomes not yet recorded above which the worker stops claiming (the database is behind). */
const MAX_UNRECORDED = 5_000;
const RECORD_BATCH = 500;
const SATURATED_DEFER_MS = 1_000;

interface Queued {
  delivery: ClaimedDelivery;
  claimedAt: number;
}

/**
 * The delivery loop. It is handed its I/O — claim, send, record — and knows nothing of the database
 * or HTTP client behind them (graphile-worker's shape), so the policy here is testable on its own.
 *
 * Claims are prefetched into a queue per origin; a send starts when its origin has a free slot. A
 * queued delivery whose lease is half gone is given back instead of sent, so a send always finishes
 * inside its lease and no other worker can be sending the same attempt. Outcomes are recorded in
 * batches after the send, off the sending path.
 */
export function createDeliveryWorker(deps: {
  claim: (args: { limit: number; perOrigin: number; excludeOrigins: string[]; leaseMs: number }) => Promise<ClaimedDelivery[]>;
  release: (ids: string[]) => Promise<void>;
  defer: (origin: string, byMs: number, limit: number) => Promise<number>;
  send: (delivery: ClaimedDelivery) => Promise<SendResult>;
  record: (outcomes: AttemptOutcome[]) => Promise<void>;
  onAttempt?: (outcome: DeliveryOutcome, delivery: ClaimedDelivery) => void;
  log: Logger;
  options: WorkerOptions;
}) {
  const { claim, release, defer, send, record, onAttempt, log, options } = deps;
  const deferredAt = new Map<string, number>();
  const queues = new Map<string, Queued[]>();
  const inFlight = new Map<string, number>();
  let inFlightTotal = 0;
  let queuedTotal = 0;
  let running = false;
  let wakeUp: (() => void) | undefined;
  let loopDone: Promise<void> = Promise.resolve();
  const unrecorded: AttemptOutcome[] = [];
  let recording: Promise<void> | undefined;
  let toRelease: string[] = [];
  const idle = new Set<() => void>();

  const wake = () => {
    wakeUp?.();
    wakeUp = undefined;
  };
  const held = (origin: string) => (inFlight.get(origin) ?? 0) + (queues.get(origin)?.length ?? 0);
  /** Moving average of each origin's send duration (ms). */
  const pace = new Map<string, number>();
  const prefetchFor = (origin: string) => options.perOrigin * ((pace.get(origin) ?? Infinity) < FAST_ORIGIN_MS ? PREFETCH_FACTOR : 1);

  function outcomeOf(delivery: ClaimedDelivery, result: SendResult): { outcome: AttemptOutcome; kind: DeliveryOutcome } {
    const attempts = delivery.attemptCount + 1;
    const base = { deliveryId: delivery.id, startedAt: result.startedAt, durationMs: result.durationMs, statusCode: result.statusCode, error: result.error };
    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode <= 299) {
      return { outcome: { ...base, status: "DELIVERED", nextAttemptAt: null }, kind: "delivered" };
    }
    // 410 Gone: the receiver says this callback will never take notifications again.
    if (result.statusCode === 410) return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "gone" };
    if (attempts > options.retrySchedule.length) return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "dead" };
    const delay = retryDelayMs(options.retrySchedule, attempts, result.retryAfterMs);
    return { outcome: { ...base, status: "PENDING", nextAttemptAt: new Date(Date.now() + delay) }, kind: "retry" };
  }

  /** Records outcomes in batches, one transaction each, until none is left. */
  function recordPending(): Promise<void> {
    recording ??= (async () => {
      let failures = 0;
      while (unrecorded.length > 0) {
        const batch = unrecorded.slice(0, RECORD_BATCH);
        try {
          await record(batch);
          unrecorded.splice(0, batch.length);
          failures = 0;
        } catch (error) {
          // The leases keep these deliveries from being claimed meanwhile; if recording fails past
          // the lease, another claim sends them again (at least once: never lost).
          log.warn({ err: error, count: batch.length }, "recording delivery outcomes failed; retrying");
          await new Promise((r) => setTimeout(r, Math.min(5_000, 100 * 2 ** failures++)));
          if (!running && failures > 5) break;
        }
      }
      recording = undefined;
      checkIdle();
    })();
    return recording;
  }

  function checkIdle(): void {
    if (inFlightTotal === 0 && recording === undefined) for (const resolve of idle) resolve();
  }

  /** Starts every queued delivery whose origin has a free slot. */
  function pump(): void {
    const now = Date.now();
    for (const [origin, queue] of queues) {
      while (queue.length > 0 && inFlightTotal < options.concurrency && (inFlight.get(origin) ?? 0) < options.perOrigin) {
        const { delivery, claimedAt } = queue.shift()!;
        queuedTotal--;
        if (!running || now - claimedAt > options.leaseMs / 2) {
          toRelease.push(delivery.id);
          continue;
        }
        inFlight.set(origin, (inFlight.get(origin) ?? 0) + 1);
        inFlightTotal++;
        void deliver(delivery);
      }
      if (queue.length === 0) queues.delete(origin);
    }
    if (toRelease.length > 0) {
      const ids = toRelease;
      toRelease = [];
      release(ids).catch((error: unknown) => log.warn({ err: error }, "giving back deliveries failed; their leases will run out"));
    }
  }

  async function deliver(delivery: ClaimedDelivery): Promise<void> {
    try {
      const result = await send(delivery);
      pace.set(delivery.origin, 0.8 * (pace.get(delivery.origin) ?? result.durationMs) + 0.2 * result.durationMs);
      const { outcome, kind } = outcomeOf(delivery, result);
      onAttempt?.(kind, delivery);
      unrecorded.push(outcome);
      void recordPending();
    } catch (error) {
      log.error({ err: error, deliveryId: delivery.id }, "delivery failed unexpectedly; it will be retried when its lease ends");
    } finally {
      inFlightTotal--;
      const left = (inFlight.get(delivery.origin) ?? 1) - 1;
      if (left === 0) inFlight.delete(delivery.origin);
      else inFlight.set(delivery.origin, left);
      pump();
      // Ask for more only when this origin's queue runs low, not after every send.
      if (held(delivery.origin) <= prefetchFor(delivery.origin) / 2) wake();
      checkIdle();
    }
  }

  /**
   * A saturated origin's due backlog would sit at the front of every claim's scan (oldest first);
   * pushing it back by a second, once a second, keeps claims for healthy origins cheap.
   */
  async function deferSaturated(full: string[]): Promise<void> {
    const now = Date.now();
    for (const origin of full) {
      if ((inFlight.get(origin) ?? 0) < options.perOrigin || now - (deferredAt.get(origin) ?? 0) < SATURATED_DEFER_MS) continue;
      deferredAt.set(origin, now);
      await defer(origin, SATURATED_DEFER_MS, 10_000);
    }
    for (const origin of deferredAt.keys()) if (!inFlight.has(origin)) deferredAt.delete(origin);
  }

  async function loop(): Promise<void> {
    while (running) {
      const capacity = options.concurrency * 2 - inFlightTotal - queuedTotal;
      let more = false;
      if (capacity > 0 && unrecorded.length < MAX_UNRECORDED) {
        try {
          const perOrigin = options.perOrigin * PREFETCH_FACTOR;
          const full = [...new Set([...queues.keys(), ...inFlight.keys()])].filter((origin) => held(origin) >= prefetchFor(origin));
          await deferSaturated(full);
          const claimed = await claim({ limit: capacity, perOrigin, excludeOrigins: full, leaseMs: options.leaseMs });
          const claimedAt = Date.now();
          for (const delivery of claimed) {
            // A claim may bring more for a slow or new origin than it may hold: give those back.
            if (held(delivery.origin) >= prefetchFor(delivery.origin)) {
              toRelease.push(delivery.id);
              continue;
            }
            const queue = queues.get(delivery.origin) ?? [];
            queue.push({ delivery, claimedAt });
            queues.set(delivery.origin, queue);
            queuedTotal++;
          }
          pump();
          more = claimed.length === capacity;
        } catch (error) {
          log.warn({ err: error }, "claiming deliveries failed; will try again");
        }
      }
      if (more || !running) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, options.pollMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  return {
    start(): void {
      if (running) return;
      running = true;
      loopDone = loop();
    },
    /** New deliveries were committed: look now instead of at the next poll. */
    wake,
    /** Stops claiming, gives back what was queued, waits for sends in flight and their recording. */
    async stop(): Promise<void> {
      running = false;
      wake();
      await loopDone;
      pump(); // with running false, this gives every queued delivery back
      if (inFlightTotal > 0 || recording !== undefined) await new Promise<void>((resolve) => idle.add(resolve));
      await recordPending();
    },
    get inFlight(): number {
      return inFlightTotal;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
