import type { Logger } from "pino";

/**
 * Upkeep of the tables every milestone and delivery writes, paced by the rows written.
 *
 * On the embedded database it is what autovacuum and the checkpointer do on a server. PGlite is
 * PostgreSQL in single-user mode, without either and without a statistics collector: a busy table is
 * never analysed (the planner guesses its size), its dead rows are never reclaimed, and its
 * write-ahead log is never recycled. The delivery claim then slows with every row queued and
 * delivered until delivery falls behind for good, and `pg_wal` grows by gigabytes (BENCHMARKS.md
 * "Sustained delivery").
 *
 * On PostgreSQL autovacuum does all that, but it looks at a database once a naptime (a minute by
 * default): a table that grew from nearly empty to a backlog of a hundred thousand deliveries in less
 * is planned as the small table it was, and every claim sorts every due row (BENCHMARKS.md "Delivery
 * with a backlog"). There the run only analyses a table that changed by more than its analysed size.
 *
 * Writers report the rows they change; once `threshold` have changed since the last run, one `run()`
 * (build-services.ts) starts. Never two at once in this process, and none sooner after the last one
 * ended than `restFactor` times that one's duration: PGlite runs it on the embedded database's one
 * thread, so over time upkeep takes at most 1 / (1 + restFactor) of that thread's time however large
 * the tables grow; each run, though, holds every other statement back, longer as they grow.
 */
export interface TableUpkeep {
  /** `rows` rows of the kept tables were inserted, updated or deleted (an estimate is enough). */
  changed(rows: number): void;
  /** No run starts after this; resolves once a run in progress has ended. */
  stop(): Promise<void>;
}

export interface TableUpkeepOptions {
  /** Rows changed since the last run that start the next one. */
  threshold: number;
  /** After a run, rest at least this many times its duration before the next. */
  restFactor: number;
  /** One round of upkeep. */
  run: () => Promise<unknown>;
  /** The debug line logged after a run. */
  done: string;
  log: Logger;
  /** Milliseconds, monotonic. */
  now?: () => number;
}

export function createTableUpkeep(options: TableUpkeepOptions): TableUpkeep {
  const { threshold, restFactor, run, log, done } = options;
  const now = options.now ?? (() => performance.now());
  let changedSinceRun = 0;
  let running: Promise<void> | undefined;
  let restUntil = 0;
  let restTimer: NodeJS.Timeout | undefined;
  let stopped = false;

  function runIfDue(): void {
    if (stopped || running !== undefined || restTimer !== undefined || changedSinceRun < threshold) return;
    const rest = restUntil - now();
    if (rest > 0) {
      restTimer = setTimeout(() => {
        restTimer = undefined;
        runIfDue();
      }, rest);
      // A rest in progress does not keep the process alive: stop() ends it.
      restTimer.unref();
      return;
    }
    const rows = changedSinceRun;
    changedSinceRun = 0;
    const started = now();
    running = run().then(
      () => log.debug({ rows, ms: Math.round(now() - started) }, done),
      // Not retried at once: the next run waits for another `threshold` rows (a closed database, say).
      (error: unknown) => log.warn({ err: error }, "the tables' upkeep failed"),
    );
    void running.then(() => {
      restUntil = now() + (now() - started) * restFactor;
      running = undefined;
      runIfDue();
    });
  }

  return {
    changed(rows) {
      if (stopped || rows <= 0) return;
      changedSinceRun += rows;
      runIfDue();
    },
    async stop() {
      stopped = true;
      clearTimeout(restTimer);
      restTimer = undefined;
      await running;
    },
  };
}

/** Every how many rounds the embedded upkeep also vacuums the tables rows are only added to. */
export const APPENDED_TABLES_EVERY = 10;

/**
 * What the embedded upkeep's `round`-th run (counted from 1) vacuums and analyses: `delivery` every
 * time, since every delivery rewrites its row and the claim steps over the dead ones; `status_event`
 * and `delivery_attempt`, whose rows are only added (retention vacuums what it deletes), on the first
 * round and every `APPENDED_TABLES_EVERY`th after — vacuumed every round, they took time the claim
 * and the sends needed (BENCHMARKS.md "Sustained delivery").
 */
export function embeddedVacuumTables(round: number): string[] {
  return (round - 1) % APPENDED_TABLES_EVERY === 0 ? ["status_event", "delivery", "delivery_attempt"] : ["delivery"];
}
