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
 * The delivery loop. It is handed its I/O — claim, send, record — and knows nothing of the database
 * or HTTP client behind them (graphile-worker's shape), so the policy here is testable on its own.
 */
export function createDeliveryWorker(deps: {
  claim: (args: { limit: number; perOrigin: number; excludeOrigins: string[]; leaseMs: number }) => Promise<ClaimedDelivery[]>;
  release: (ids: string[]) => Promise<void>;
  send: (delivery: ClaimedDelivery) => Promise<SendResult>;
  record: (outcomes: AttemptOutcome[]) => Promise<void>;
  onAttempt?: (outcome: DeliveryOutcome, delivery: ClaimedDelivery) => void;
  log: Logger;
  options: WorkerOptions;
}) {
  const { claim, release, send, record, onAttempt, log, options } = deps;
  const inFlight = new Map<string, number>(); // origin → sends in flight
  let inFlightTotal = 0;
  let running = false;
  let wakeUp: (() => void) | undefined;
  let loopDone: Promise<void> = Promise.resolve();
  const pending: AttemptOutcome[] = [];
  let flushing: Promise<void> = Promise.resolve();
  const idle = new Set<() => void>();

  const wake = () => {
    wakeUp?.();
    wakeUp = undefined;
  };

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

  /** Writes recorded outcomes in batches: one transaction for many attempts. */
  function flush(): Promise<void> {
    flushing = flushing.then(async () => {
      while (pending.length > 0) {
        const batch = pending.splice(0, 500);
        for (let attempt = 0; ; attempt++) {
          try {
            await record(batch);
            break;
          } catch (error) {
            // The leases keep these deliveries from being claimed again meanwhile; if recording keeps
            // failing past the lease they are retried by a worker (at least once, never lost).
            log.warn({ err: error, count: batch.length }, "recording delivery outcomes failed; retrying");
            await new Promise((r) => setTimeout(r, Math.min(5_000, 200 * 2 ** attempt)));
            if (!running && attempt > 3) return;
          }
        }
      }
    });
    return flushing;
  }

  async function deliver(delivery: ClaimedDelivery): Promise<void> {
    try {
      const result = await send(delivery);
      const { outcome, kind } = outcomeOf(delivery, result);
      onAttempt?.(kind, delivery);
      pending.push(outcome);
      await flush();
    } catch (error) {
      log.error({ err: error, deliveryId: delivery.id }, "delivery failed unexpectedly; it will be retried when its lease ends");
    } finally {
      inFlightTotal--;
      const left = (inFlight.get(delivery.origin) ?? 1) - 1;
      if (left === 0) inFlight.delete(delivery.origin);
      else inFlight.set(delivery.origin, left);
      wake();
      if (inFlightTotal === 0) for (const resolve of idle) resolve();
    }
  }

  async function loop(): Promise<void> {
    while (running) {
      let claimedAll = false;
      const free = options.concurrency - inFlightTotal;
      if (free > 0) {
        try {
          const saturated = [...inFlight].filter(([, n]) => n >= options.perOrigin).map(([origin]) => origin);
          const claimed = await claim({ limit: free, perOrigin: options.perOrigin, excludeOrigins: saturated, leaseMs: options.leaseMs });
          const giveBack: string[] = [];
          for (const delivery of claimed) {
            const busy = inFlight.get(delivery.origin) ?? 0;
            if (busy >= options.perOrigin || !running) {
              giveBack.push(delivery.id);
              continue;
            }
            inFlight.set(delivery.origin, busy + 1);
            inFlightTotal++;
            void deliver(delivery);
          }
          await release(giveBack);
          claimedAll = claimed.length === free && giveBack.length === 0;
        } catch (error) {
          log.warn({ err: error }, "claiming deliveries failed; will try again");
        }
      }
      if (claimedAll || !running) continue;
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
    /** Stops claiming, waits for sends in flight and their recording. */
    async stop(): Promise<void> {
      running = false;
      wake();
      await loopDone;
      if (inFlightTotal > 0) await new Promise<void>((resolve) => idle.add(resolve));
      await flush();
    },
    get inFlight(): number {
      return inFlightTotal;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
