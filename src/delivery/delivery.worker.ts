import { AsyncResource } from "node:async_hooks";
import type { Logger } from "pino";
import { type CircuitChange, type CircuitOptions, createCircuitBreakers, originAnswered } from "./circuit-breaker";
import { retryDelayMs } from "./backoff";
import type { DeliveryOutcome } from "./delivery.metrics";
import type { AttemptOutcome, ClaimedDelivery } from "./delivery.store";

/** What one send did (sender.ts makes it): the worker records it as the attempt's outcome. */
export interface SendResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

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

/**
 * Claimed deliveries kept ready per origin, as a multiple of its concurrency, so a freed slot need
 * not wait for a claim query. Only for origins that answer quickly: a slow one would sit on claims
 * until they had to be given back.
 */
const PREFETCH_FACTOR = 32;
const FAST_ORIGIN_MS = 250;
/** Deliveries claimed ahead over all origins, as a multiple of the concurrency: fewer, larger claims. */
const CLAIM_AHEAD = 4;
/** Outcomes not yet recorded above which the worker stops claiming (the database is behind). */
const MAX_UNRECORDED = 5_000;
const RECORD_BATCH = 500;
/** How long the first outcome of a batch waits for others before they are recorded together. */
const RECORD_LINGER_MS = 20;
const SATURATED_DEFER_MS = 1_000;
const MAX_RECORD_BACKOFF_MS = 5_000;

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

interface Queued {
  delivery: ClaimedDelivery;
  /** The last instant (this worker's clock) at which a send may start and still end inside the lease. */
  startBy: number;
}

/**
 * The delivery loop. It is handed its I/O — claim, send, record — and knows nothing of the database
 * or HTTP client behind them (graphile-worker's shape), so the policy here is testable on its own.
 *
 * Claims are prefetched into a queue per origin; a send starts when its origin has a free slot and
 * enough of its lease is left. The lease clock starts before the claim query is sent, so this
 * worker's idea of a lease's end is never later than the database's, whatever the clock offset
 * between them. Outcomes are recorded in batches after the send, off the sending path; a record that
 * arrives after another worker took the delivery over is dropped by the store (fencing).
 */
export function createDeliveryWorker(deps: WorkerDeps) {
  const {
    claim,
    release,
    defer,
    send,
    record,
    onAttempt,
    onCircuit,
    log,
    options,
    now = () => performance.now(),
  } = deps;
  const breakers = createCircuitBreakers(options.circuit, now);
  /** Runs a function in the async context the worker was created in (see `handoff.take`). */
  const inWorkerContext = AsyncResource.bind((run: () => void) => run());
  const queues = new Map<string, Queued[]>();
  const inFlight = new Map<string, number>();
  const deferredAt = new Map<string, number>();
  /** Moving average of each origin's send duration (ms). */
  const pace = new Map<string, number>();
  const counts = { inFlight: 0, queued: 0 };
  const unrecorded: AttemptOutcome[] = [];
  let toRelease: ClaimedDelivery[] = [];
  let running = false;
  let wakeUp: (() => void) | undefined;
  let loopDone: Promise<void> = Promise.resolve();
  let recording: Promise<void> | undefined;
  let stopping: Promise<void> | undefined;
  /** Give-backs under way; `stop()` waits for them, so the database is not closed under them. */
  const releasing = new Set<Promise<void>>();
  const idleWaiters = new Set<() => void>();

  const wake = () => {
    wakeUp?.();
    wakeUp = undefined;
  };
  const held = (origin: string) => (inFlight.get(origin) ?? 0) + (queues.get(origin)?.length ?? 0);
  const isFast = (origin: string) => (pace.get(origin) ?? Infinity) < FAST_ORIGIN_MS;
  const isKnownSlow = (origin: string) => (pace.get(origin) ?? 0) >= FAST_ORIGIN_MS;
  const prefetchFor = (origin: string) => options.perOrigin * (isFast(origin) ? PREFETCH_FACTOR : 1);

  function outcomeOf(
    delivery: ClaimedDelivery,
    result: SendResult,
  ): { outcome: AttemptOutcome; kind: DeliveryOutcome } {
    const attempts = delivery.attemptCount + 1;
    const base = {
      deliveryId: delivery.id,
      leaseToken: delivery.leaseToken,
      startedAt: result.startedAt,
      durationMs: result.durationMs,
      statusCode: result.statusCode,
      error: result.error,
    };
    if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode <= 299) {
      return { outcome: { ...base, status: "DELIVERED", nextAttemptAt: null }, kind: "delivered" };
    }
    // 410 Gone: the receiver says this callback will never take notifications again.
    if (result.statusCode === 410) return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "gone" };
    if (attempts > options.retrySchedule.length)
      return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "dead" };
    const delay = retryDelayMs(options.retrySchedule, attempts, result.retryAfterMs);
    return { outcome: { ...base, status: "PENDING", nextAttemptAt: new Date(Date.now() + delay) }, kind: "retry" };
  }

  /**
   * Waits a moment before recording so that outcomes of sends finishing together share one statement.
   * Without it each outcome was recorded alone: the record's own query work kept the sends' answers
   * from being read, so there was only ever one outcome waiting (10,000 statements for 10,000 sends
   * on the embedded database, where queries run on this thread).
   */
  async function lingerThenDrain(): Promise<void> {
    if (running && unrecorded.length < RECORD_BATCH) await new Promise((r) => setTimeout(r, RECORD_LINGER_MS));
    await drainOutcomes();
  }

  /** Records outcomes in batches until none is left; while stopped, gives up after a few failures. */
  async function drainOutcomes(): Promise<void> {
    let failures = 0;
    while (unrecorded.length > 0) {
      const batch = unrecorded.slice(0, RECORD_BATCH);
      try {
        const recorded = await record(batch);
        unrecorded.splice(0, batch.length);
        failures = 0;
        if (recorded < batch.length)
          log.warn(
            { fencedOut: batch.length - recorded },
            "outcomes of deliveries whose lease another worker had taken over were not recorded",
          );
      } catch (error) {
        // Until recorded, the claims keep these deliveries from being claimed; if recording fails past
        // a lease, another claim sends that delivery again (at least once: never lost).
        failures++;
        log.warn({ err: error, count: batch.length }, "recording delivery outcomes failed; retrying");
        if (!running && failures > 5) {
          log.error(
            { count: unrecorded.length },
            "stopping without recording these outcomes: their deliveries will be sent again when their leases end",
          );
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(MAX_RECORD_BACKOFF_MS, 50 * 2 ** failures)));
      }
    }
  }

  /** Starts recording unless a recording is under way; resolves when the outcomes queued so far are recorded (or given up on). */
  function recordPending(): Promise<void> {
    // `.finally` runs after this assignment even when nothing was pending, so `recording` is never
    // left holding a settled promise (which would stop all later recording).
    recording ??= lingerThenDrain().finally(() => {
      recording = undefined;
      if (unrecorded.length > 0 && running) void recordPending();
      notifyIfIdle();
    });
    return recording;
  }

  function notifyIfIdle(): void {
    if (counts.inFlight > 0 || recording !== undefined) return;
    for (const resolve of idleWaiters) resolve();
    idleWaiters.clear();
  }

  function giveBack(delivery: ClaimedDelivery): void {
    toRelease.push(delivery);
  }

  function flushReleases(): void {
    if (toRelease.length === 0) return;
    const claims = toRelease;
    toRelease = [];
    const done: Promise<void> = release(claims)
      .then(
        () => {
          // Given back while running: they are claimable again, by this worker too (no NOTIFY for them).
          if (running) wake();
        },
        (error: unknown) => log.warn({ err: error }, "giving back deliveries failed; their leases will run out"),
      )
      .finally(() => releasing.delete(done));
    releasing.add(done);
  }

  /** Starts every queued delivery whose origin has a free slot; gives back what can no longer start in time. */
  function pump(): void {
    const t = now();
    for (const [origin, queue] of queues) {
      while (
        queue.length > 0 &&
        counts.inFlight < options.concurrency &&
        (inFlight.get(origin) ?? 0) < options.perOrigin
      ) {
        if (!breakers.allows(origin)) {
          // Open, or its probe under way: what waits for this origin goes back, to be claimed later.
          for (const { delivery } of queue.splice(0)) {
            counts.queued--;
            giveBack(delivery);
          }
          break;
        }
        const { delivery, startBy } = queue.shift()!;
        counts.queued--;
        if (!running || t > startBy) {
          breakers.abandon(origin);
          giveBack(delivery);
          continue;
        }
        inFlight.set(origin, (inFlight.get(origin) ?? 0) + 1);
        counts.inFlight++;
        void deliver(delivery, startBy);
      }
      if (queue.length === 0) queues.delete(origin);
    }
    flushReleases();
  }

  async function deliver(delivery: ClaimedDelivery, startBy: number): Promise<void> {
    try {
      const result = await send(delivery, startBy);
      if (result === null) {
        breakers.abandon(delivery.origin);
        giveBack(delivery);
      } else {
        pace.set(delivery.origin, 0.8 * (pace.get(delivery.origin) ?? result.durationMs) + 0.2 * result.durationMs);
        const { outcome, kind } = outcomeOf(delivery, result);
        onAttempt?.(kind, delivery);
        circuitOutcome(delivery.origin, originAnswered(result.statusCode));
        unrecorded.push(outcome);
        void recordPending();
      }
    } catch (error) {
      breakers.abandon(delivery.origin);
      log.error(
        { err: error, deliveryId: delivery.id },
        "delivery failed unexpectedly; it will be retried when its lease ends",
      );
    } finally {
      counts.inFlight--;
      const left = (inFlight.get(delivery.origin) ?? 1) - 1;
      if (left === 0) inFlight.delete(delivery.origin);
      else inFlight.set(delivery.origin, left);
      pump();
      // Ask for more only when this origin's queue runs low, not after every send.
      if (held(delivery.origin) <= prefetchFor(delivery.origin) / 2) wake();
      notifyIfIdle();
    }
  }

  /** Counts a send for its origin's circuit; one that opens also pushes the origin's due backlog past it. */
  function circuitOutcome(origin: string, answered: boolean): void {
    const change = breakers.record(origin, answered);
    if (!change) return;
    onCircuit?.(change, breakers.openCount());
    if (change.change === "opened") {
      log.warn({ origin, openMs: change.forMs }, "callback origin keeps failing: circuit open, sends paused");
      // Every instance then leaves it alone for that long, not only this one (whose claims skip it).
      void defer(origin, change.forMs!, 10_000).catch((error: unknown) =>
        log.warn({ err: error, origin }, "pushing back a failing origin's deliveries failed"),
      );
    } else log.info({ origin }, "callback origin answered its probe: circuit closed, sends resumed");
  }

  /**
   * A slow origin's due backlog would sit at the front of every claim's scan (oldest first); pushing
   * it back by a second, once a second, keeps claims for other origins cheap. Only an origin seen to
   * be slow is deferred: a fast one works through its prefetched claims well within that second and
   * would then idle.
   */
  async function deferSaturated(full: string[]): Promise<void> {
    const t = now();
    for (const origin of full) {
      if (
        !isKnownSlow(origin) ||
        (inFlight.get(origin) ?? 0) < options.perOrigin ||
        t - (deferredAt.get(origin) ?? -Infinity) < SATURATED_DEFER_MS
      )
        continue;
      deferredAt.set(origin, t);
      await defer(origin, SATURATED_DEFER_MS, 10_000);
    }
    for (const origin of deferredAt.keys()) if (!inFlight.has(origin)) deferredAt.delete(origin);
  }

  async function claimMore(capacity: number): Promise<boolean> {
    const full = [...new Set([...queues.keys(), ...inFlight.keys()])].filter(
      (origin) => held(origin) >= prefetchFor(origin),
    );
    await deferSaturated(full);
    full.push(...breakers.closedTo());
    const claimStartedAt = now();
    const claimed = await claim({
      limit: capacity,
      perOrigin: options.perOrigin * PREFETCH_FACTOR,
      excludeOrigins: full,
      leaseMs: options.leaseMs,
    });
    enqueue(claimed, claimStartedAt);
    pump();
    // Claim again at once only if there may be more to take for an origin with room: a claim that
    // excludes every origin it found would scan their whole backlog for nothing.
    return claimed.length === capacity && claimed.some((d) => held(d.origin) < prefetchFor(d.origin));
  }

  /** Queues claimed deliveries per origin; what an origin has no room for is given back. */
  function enqueue(claimed: readonly ClaimedDelivery[], claimStartedAt: number): void {
    const startBy = claimStartedAt + options.leaseMs - options.sendBudgetMs;
    for (const delivery of claimed) {
      // A claim may bring more for a slow or new origin than it may hold: give those back.
      if (held(delivery.origin) >= prefetchFor(delivery.origin)) {
        giveBack(delivery);
        continue;
      }
      const queue = queues.get(delivery.origin) ?? [];
      queue.push({ delivery, startBy });
      queues.set(delivery.origin, queue);
      counts.queued++;
    }
  }

  async function loop(): Promise<void> {
    while (running) {
      const capacity = options.concurrency * CLAIM_AHEAD - counts.inFlight - counts.queued;
      let more = false;
      // A claim is one statement whatever its size: with work still queued, wait until a sizeable
      // batch fits rather than claiming a few rows at a time as slots free up.
      const worthClaiming = capacity >= options.concurrency || counts.queued === 0;
      if (capacity > 0 && worthClaiming && unrecorded.length < MAX_UNRECORDED) {
        try {
          more = await claimMore(capacity);
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

  const handoff: DeliveryHandoff = {
    leaseMs: options.leaseMs,
    room(origin) {
      if (!running || breakers.isClosedTo(origin)) return 0;
      const total = options.concurrency * CLAIM_AHEAD - counts.inFlight - counts.queued;
      return Math.max(0, Math.min(total, prefetchFor(origin) - held(origin)));
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
      if (running) return;
      if (stopping) {
        void stopping.then(() => this.start());
        return;
      }
      running = true;
      loopDone = loop();
    },
    /** New deliveries were committed: look now instead of at the next poll. */
    wake,
    /** Stops claiming, gives back what was queued, waits for sends in flight, their recording and the give-backs. Safe to call twice. */
    stop(): Promise<void> {
      if (!running && !stopping) return Promise.resolve();
      stopping ??= (async () => {
        running = false;
        wake();
        await loopDone;
        for (const queue of queues.values()) for (const { delivery } of queue) giveBack(delivery);
        queues.clear();
        counts.queued = 0;
        flushReleases();
        if (counts.inFlight > 0 || recording !== undefined)
          await new Promise<void>((resolve) => idleWaiters.add(resolve));
        await recordPending();
        await Promise.all(releasing);
      })().finally(() => (stopping = undefined));
      return stopping;
    },
  };
}

export type DeliveryWorker = ReturnType<typeof createDeliveryWorker>;
