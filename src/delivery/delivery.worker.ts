import { AsyncResource } from "node:async_hooks";
import type { Logger } from "pino";
import { decideOutcome, type SendResult } from "./attempt-outcome";
import { type CircuitChange, type CircuitOptions, createCircuitBreakers, originAnswered } from "./circuit-breaker";
import { ClaimLoop } from "./claim-loop";
import type { DeliveryOutcome } from "./delivery.metrics";
import type { AttemptOutcome, ClaimedDelivery } from "./delivery.store";
import { FruitlessClaims } from "./fruitless-claims";
import { GiveBacks } from "./give-backs";
import { OriginPacing, PREFETCH_FACTOR, SATURATED_DEFER_MS } from "./origin-pacing";
import { OriginQueues } from "./origin-queues";
import { OutcomeRecorder } from "./outcome-recorder";

export interface WorkerOptions {
  /** Sends in flight at once in this worker, over all origins. */
  concurrency: number;
  /** Sends in flight at once from this worker to one origin: a slow receiver holds at most this many per worker. */
  perOrigin: number;
  /** How often to look for due deliveries when nothing woke the worker. */
  pollMs: number;
  /** How long a claim holds a delivery. At least `sendBudgetMs` plus a window to start sends in (config.ts checks). */
  leaseMs: number;
  /**
   * The part of a lease a send may need: its time limit plus a margin to record the outcome. A send
   * starts only while at least this much of its lease is left.
   */
  sendBudgetMs: number;
  /** Waits before each retry; a delivery is dead after schedule.length + 1 attempts. */
  retrySchedule: readonly number[];
  /** Per-origin circuit breakers (circuit-breaker.ts); `failures: 0` turns them off. */
  circuit: CircuitOptions;
}

/** Deliveries claimed ahead over all origins, as a multiple of the concurrency: fewer, larger claims. */
const CLAIM_AHEAD = 4;
/** Outcomes not yet recorded above which the worker stops claiming (the database is behind). */
const MAX_UNRECORDED = 5_000;
/** Most deliveries of an origin whose circuit just opened one statement pushes back (once per opening). */
const CIRCUIT_DEFER_LIMIT = 10_000;
/**
 * Most deliveries of a saturated slow origin one statement pushes back (up to once a second). Each is
 * a non-HOT update of a row with several indexes, and on the embedded database the whole statement
 * holds every other one back: under sustained overload 10,000 at about 200,000 pending took over 8 s
 * (BENCHMARKS.md "Sustained delivery"). Fewer rows also push back less of a deep backlog: claims for
 * other origins may still step over the rest.
 */
const SATURATED_DEFER_LIMIT = 1_000;

export interface WorkerDeps {
  claim: (args: {
    limit: number;
    perOrigin: number;
    excludeOrigins: string[];
    leaseMs: number;
  }) => Promise<ClaimedDelivery[]>;
  release: (claims: ClaimedDelivery[]) => Promise<unknown>;
  defer: (origin: string, byMs: number, limit: number) => Promise<number>;
  /**
   * Sends one notification. `startBy` (a `performance.now()` instant) is the last moment the POST
   * may begin: a send that is not ready by then (say, its signing secret was slow to load) MUST
   * return null without sending, and the delivery is given back.
   */
  send: (delivery: ClaimedDelivery, startBy: number) => Promise<SendResult | null>;
  /** Records outcomes; returns how many still held their claim (the rest were fenced out). */
  record: (outcomes: AttemptOutcome[]) => Promise<number>;
  onAttempt?: (outcome: DeliveryOutcome, delivery: ClaimedDelivery) => void;
  /** An origin's circuit opened or closed (for metrics). */
  onCircuit?: (change: CircuitChange, openCount: number) => void;
  log: Logger;
  options: WorkerOptions;
  /** For tests: the clock the lease arithmetic runs on (monotonic milliseconds). */
  now?: () => number;
}

/**
 * How an ingestion in this process hands freshly queued deliveries to its worker: it asks how many
 * the worker has room for, queues up to that many already leased to it, and after the commit hands
 * them over; they are sent without a claim query. Room is not reserved: concurrent ingestions can
 * lease more than there is room for, and the worker gives the surplus back (then claims it again).
 */
export interface DeliveryHandoff {
  readonly leaseMs: number;
  /** How many new deliveries to this origin the worker would take now (0 while stopped). */
  room(origin: string): number;
  /** Deliveries committed already leased to this worker; `claimStartedAt` is when their lease clock started. */
  take(deliveries: ClaimedDelivery[], claimStartedAt: number): void;
}

/**
 * The delivery worker: a claim loop (claim-loop.ts) fills per-origin queues (origin-queues.ts) sized
 * by each origin's pace (origin-pacing.ts); a send starts when its origin has a free slot, its circuit
 * allows it (circuit-breaker.ts) and enough of its lease is left; its result becomes an outcome
 * (attempt-outcome.ts) recorded in batches (outcome-recorder.ts); what cannot be sent is given back
 * (give-backs.ts). Its I/O is injected (delivery.runtime.ts wires the store and HTTP client).
 *
 * The lease clock starts before the claim query is sent, so this worker's idea of a lease's end is
 * never later than the database's, whatever the clock offset between them. A record that arrives
 * after another worker took the delivery over is dropped by the store (fencing).
 *
 * States: "stopped", "running", "stopping" (no claims or new sends; waits for the sends in flight,
 * their recording and the give-backs).
 */
export function createDeliveryWorker(deps: WorkerDeps) {
  const { claim, defer, send, onAttempt, onCircuit, log, options, now = () => performance.now() } = deps;
  let state: "stopped" | "running" | "stopping" = "stopped";
  let stopping: Promise<void> | undefined;
  const idleWaiters = new Set<() => void>();

  const breakers = createCircuitBreakers(options.circuit, now);
  const queues = new OriginQueues(options);
  const pacing = new OriginPacing(options.perOrigin);
  const recorder = new OutcomeRecorder({ record: deps.record, log, onSettled: notifyIfIdle });
  const claimLoop = new ClaimLoop({ pollMs: options.pollMs, claimOnce, log });
  const fruitless = new FruitlessClaims(options.pollMs);
  const giveBacks = new GiveBacks({
    release: deps.release,
    onReleased: () => {
      // Claimable again, by this worker too (no NOTIFY for them).
      if (state === "running") wakeForAnyOrigin();
    },
    log,
  });
  /** Runs a function in the async context the worker was created in (see `handoff.take`). */
  const inWorkerContext = AsyncResource.bind((run: () => void) => run());

  const spareClaims = () => options.concurrency * CLAIM_AHEAD - queues.inFlight - queues.queued;
  const hasRoom = (origin: string) => queues.held(origin) < pacing.prefetchFor(origin);

  function wakeForAnyOrigin(): void {
    fruitless.forget();
    claimLoop.wake();
  }

  function notifyIfIdle(): void {
    if (queues.inFlight > 0 || recorder.busy) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  }

  /** Starts every queued delivery whose origin has a free slot; gives back what can no longer start in time. */
  function pump(): void {
    const t = now();
    for (const origin of queues.waitingOrigins()) {
      while (queues.canStart(origin)) {
        if (!breakers.allows(origin)) {
          // Open, or its probe under way: what waits for this origin goes back, to be claimed later.
          for (const { delivery } of queues.takeAll(origin)) giveBacks.add(delivery);
          break;
        }
        const { delivery, startBy } = queues.takeNext(origin)!;
        if (state !== "running" || t > startBy) {
          breakers.abandon(origin);
          giveBacks.add(delivery);
          continue;
        }
        queues.started(origin);
        void deliver(delivery, startBy);
      }
    }
    giveBacks.flush();
  }

  async function deliver(delivery: ClaimedDelivery, startBy: number): Promise<void> {
    try {
      const result = await send(delivery, startBy);
      if (result === null) {
        breakers.abandon(delivery.origin);
        giveBacks.add(delivery);
      } else {
        const { outcome, kind } = decideOutcome(delivery, result, options.retrySchedule);
        onAttempt?.(kind, delivery);
        if (result.noToken) {
          // Nothing reached the origin: neither its pace nor its circuit learn anything (a probe may go again).
          breakers.abandon(delivery.origin);
        } else {
          pacing.observe(delivery.origin, result.durationMs);
          countForCircuit(delivery.origin, originAnswered(result.statusCode));
        }
        recorder.add(outcome);
      }
    } catch (error) {
      breakers.abandon(delivery.origin);
      log.error(
        { err: error, deliveryId: delivery.id },
        "delivery failed unexpectedly; it will be retried when its lease ends",
      );
    } finally {
      queues.finished(delivery.origin);
      pump();
      // Ask for more only when this origin's queue runs low, not after every send.
      if (queues.held(delivery.origin) <= pacing.prefetchFor(delivery.origin) / 2) claimLoop.wake();
      notifyIfIdle();
    }
  }

  /** Counts a send for its origin's circuit; one that opens also pushes the origin's due backlog past it. */
  function countForCircuit(origin: string, answered: boolean): void {
    const change = breakers.record(origin, answered);
    if (!change) return;
    onCircuit?.(change, breakers.openCount());
    if (change.change === "opened") {
      log.warn({ origin, openMs: change.forMs }, "callback origin keeps failing: circuit open, sends paused");
      // Every instance then leaves it alone for that long, not only this one (whose claims skip it).
      void defer(origin, change.forMs!, CIRCUIT_DEFER_LIMIT).catch((error: unknown) =>
        log.warn({ err: error, origin }, "pushing back a failing origin's deliveries failed"),
      );
    } else log.info({ origin }, "callback origin answered its probe: circuit closed, sends resumed");
  }

  /** Wakes the claim loop when a skipped fruitless claim's interval ends (the loop's own poll restarts at the skip). */
  let fruitlessTimer: NodeJS.Timeout | undefined;

  /** One round of the claim loop: true when claiming again at once may find more. */
  async function claimOnce(): Promise<boolean> {
    const capacity = spareClaims();
    // A claim is one statement whatever its size: with work still queued, wait until a sizeable
    // batch fits rather than claiming a few rows at a time as slots free up.
    const worthClaiming = capacity >= options.concurrency || queues.queued === 0;
    if (capacity <= 0 || !worthClaiming || recorder.backlog >= MAX_UNRECORDED) return false;
    const full = queues.heldOrigins().filter((origin) => !hasRoom(origin));
    await deferSaturated(full);
    full.push(...breakers.closedTo());
    const claimStartedAt = now();
    const waitMs = fruitless.waitBefore(full, claimStartedAt);
    if (waitMs > 0) {
      clearTimeout(fruitlessTimer);
      fruitlessTimer = setTimeout(() => claimLoop.wake(), waitMs).unref();
      return false;
    }
    const claimed = await claim({
      limit: capacity,
      perOrigin: options.perOrigin * PREFETCH_FACTOR,
      excludeOrigins: full,
      leaseMs: options.leaseMs,
    });
    fruitless.claimed(claimed.length, full, claimStartedAt);
    enqueue(claimed, claimStartedAt);
    pump();
    // Claim again at once only if there may be more to take for an origin with room: a claim that
    // excludes every origin it found would scan their whole backlog for nothing.
    return claimed.length === capacity && claimed.some((d) => hasRoom(d.origin));
  }

  /** Pushes back the due backlog of full origins known to be slow (origin-pacing.ts says which, and when). */
  async function deferSaturated(full: readonly string[]): Promise<void> {
    const t = now();
    for (const origin of full)
      if (pacing.takeDeferral(origin, queues.inFlightTo(origin), t))
        await defer(origin, SATURATED_DEFER_MS, SATURATED_DEFER_LIMIT);
    pacing.forgetDeferralsUnless((origin) => queues.inFlightTo(origin) > 0);
  }

  /** Queues claimed deliveries per origin; what an origin has no room for (a slow or new one) is given back. */
  function enqueue(claimed: readonly ClaimedDelivery[], claimStartedAt: number): void {
    const startBy = claimStartedAt + options.leaseMs - options.sendBudgetMs;
    for (const delivery of claimed) {
      if (hasRoom(delivery.origin)) queues.push({ delivery, startBy });
      else giveBacks.add(delivery);
    }
  }

  const handoff: DeliveryHandoff = {
    leaseMs: options.leaseMs,
    room(origin) {
      if (state !== "running" || breakers.isClosedTo(origin)) return 0;
      return Math.max(0, Math.min(spareClaims(), pacing.prefetchFor(origin) - queues.held(origin)));
    },
    take(deliveries, claimStartedAt) {
      // In the worker's own async context, not the ingesting request's: the sends this starts (and
      // those started from their completions) must not carry the request's trace or log context.
      inWorkerContext(() => {
        enqueue(deliveries, claimStartedAt);
        pump();
      });
    },
  };

  return {
    handoff,
    /** Starts the loop; while a `stop()` is still under way, starts once it has finished. */
    start(): void {
      if (state === "running") return;
      if (stopping) {
        void stopping.then(() => this.start());
        return;
      }
      state = "running";
      recorder.mode = "live";
      claimLoop.start();
    },
    /** Deliveries may be due for any origin (committed elsewhere, requeued): look now instead of at the next poll. */
    wake: (): void => wakeForAnyOrigin(),
    /**
     * This process's ingestion committed deliveries it could not hand over: look now, unless the last
     * claim found nothing with at least the origins excluded that are still full (fruitless-claims.ts).
     */
    wakeAfterLocalCommit: (): void => claimLoop.wake(),
    /** Stops claiming, gives back what was queued, waits for sends in flight, their recording and the give-backs. Safe to call twice. */
    stop(): Promise<void> {
      if (state === "stopped") return Promise.resolve();
      stopping ??= (async () => {
        state = "stopping";
        clearTimeout(fruitlessTimer);
        recorder.mode = "closing";
        await claimLoop.stop();
        for (const { delivery } of queues.takeAll()) giveBacks.add(delivery);
        giveBacks.flush();
        if (queues.inFlight > 0 || recorder.busy) await new Promise<void>((resolve) => idleWaiters.add(resolve));
        await recorder.flush();
        await giveBacks.settled();
      })().finally(() => {
        state = "stopped";
        stopping = undefined;
      });
      return stopping;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
