import type { Logger } from "pino";
import type { RetentionAges, RetentionKind } from "../domain/retention";

export interface RetentionWorkerOptions {
  ages: RetentionAges;
  /** Rows one statement deletes at most: each batch is a short transaction of its own. */
  batchSize: number;
  /** Between runs. */
  intervalMs: number;
  /** Deletes one batch of `kind` older than `before`; answers how many rows went (retention.store.ts). */
  pruneBatch: (kind: RetentionKind, before: Date, limit: number) => Promise<number>;
  /**
   * Marks one batch of pending deliveries dead: those of expired subscriptions, and those of
   * subscriptions disabled before `disabledBefore` (null: never); answers how many (retention.store.ts).
   */
  expirePendingBatch: (limit: number, disabledBefore: Date | null) => Promise<number>;
  onExpired: (rows: number) => void;
  /** After a run that deleted rows: VACUUM their tables (the embedded database has no autovacuum). */
  vacuum?: ((kinds: RetentionKind[]) => Promise<unknown>) | undefined;
  onPruned: (kind: RetentionKind, rows: number) => void;
  onRun: (outcome: "done" | "failed") => void;
  log: Logger;
  now?: () => Date;
}

export interface RetentionWorker {
  /** One run over every kind now (what the timer does); resolves with the rows deleted per kind. */
  runOnce(): Promise<Partial<Record<RetentionKind, number>>>;
  /** Stops the timer and waits for a run in progress to end its current batch. */
  stop(): Promise<void>;
}

const DAY_MS = 86_400_000;
/**
 * Deliveries before events and ONE Record subscriptions: each goes only once its deliveries have
 * (retention.store.ts), so one whose last delivery goes in a run goes in the same run.
 */
const ORDER: readonly RetentionKind[] = [
  "delivered_deliveries",
  "dead_deliveries",
  "expired_subscriptions",
  "onerecord_subscriptions",
  "onerecord_proposals",
  "onerecord_notifications_received",
  "onerecord_access_delegations",
  "events",
  "carrier_statuses",
];

/**
 * Deletes what has outlived its retention, kind by kind, in batches until a batch comes back short,
 * yielding the event loop between batches. The first run starts one interval after the start (not
 * at once, so a fleet restarted together does not prune together while it warms up); every
 * instance runs one, and SKIP LOCKED lets them share the work instead of waiting on each other.
 */
export function startRetentionWorker(options: RetentionWorkerOptions): RetentionWorker {
  const { ages, batchSize, intervalMs, pruneBatch, expirePendingBatch, onExpired, onRun, onPruned, log } = options;
  const now = options.now ?? (() => new Date());
  let stopped = false;
  let running: Promise<Partial<Record<RetentionKind, number>>> | undefined;
  let timer: NodeJS.Timeout | undefined;

  /** Runs one kind of batch until one comes back short (or a stop); answers the rows in all. */
  async function inBatches(batch: () => Promise<number>, each: (rows: number) => void): Promise<number> {
    let total = 0;
    for (;;) {
      if (stopped) return total;
      const rows = await batch();
      total += rows;
      if (rows > 0) each(rows);
      if (rows < batchSize) return total;
      await new Promise((resolve) => setImmediate(resolve)); // requests get their turn between batches
    }
  }

  async function run(): Promise<Partial<Record<RetentionKind, number>>> {
    // A disabled subscription's parked notifications are dead once it has been disabled as long as a
    // dead delivery is kept: then retention deletes them like any dead one.
    const disabledBefore = ages.dead_deliveries > 0 ? new Date(now().getTime() - ages.dead_deliveries * DAY_MS) : null;
    const expired = await inBatches(() => expirePendingBatch(batchSize, disabledBefore), onExpired);
    if (expired > 0)
      log.info({ deliveries: expired }, "retention: pending deliveries of expired subscriptions marked dead");
    const deleted: Partial<Record<RetentionKind, number>> = {};
    for (const kind of ORDER) {
      const days = ages[kind];
      if (days <= 0) continue;
      const before = new Date(now().getTime() - days * DAY_MS);
      deleted[kind] = await inBatches(
        () => pruneBatch(kind, before, batchSize),
        (rows) => onPruned(kind, rows),
      );
    }
    const touched = (Object.keys(deleted) as RetentionKind[]).filter((kind) => (deleted[kind] ?? 0) > 0);
    if (expired > 0 && !touched.includes("expired_subscriptions")) touched.push("expired_subscriptions");
    if (touched.length > 0) {
      log.info({ deleted }, "retention: deleted what outlived its retention");
      if (options.vacuum && !stopped) await options.vacuum(touched);
    }
    return deleted;
  }

  function runOnce() {
    running ??= run().finally(() => (running = undefined));
    return running;
  }

  function schedule() {
    if (stopped || intervalMs <= 0) return;
    timer = setTimeout(() => {
      void runOnce()
        .then(() => onRun("done"))
        .catch((error: unknown) => {
          onRun("failed");
          log.warn({ err: error }, "retention run failed; trying again at the next one");
        })
        .finally(schedule);
    }, intervalMs);
    timer.unref();
  }
  schedule();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}
