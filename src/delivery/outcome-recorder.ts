import type { Logger } from "pino";
import type { AttemptOutcome } from "./delivery.store";

export const RECORD_BATCH = 500;
/** How long the first outcome of a batch waits for others so that sends finishing together share one statement. */
export const RECORD_LINGER_MS = 20;
const MAX_RECORD_BACKOFF_MS = 5_000;
/** Consecutive failed recordings after which a closing recorder gives up. */
export const CLOSING_FAILURES = 5;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export interface OutcomeRecorderDeps {
  /** Records outcomes; returns how many still held their claim (the rest were fenced out). */
  record: (outcomes: AttemptOutcome[]) => Promise<number>;
  log: Logger;
  /** Called whenever a recording round ends (the worker's idle check). */
  onSettled?: () => void;
  /** For tests: how the linger and the backoff wait. */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Outcomes waiting to be recorded, recorded in batches off the sending path, one recording at a time.
 *
 * Modes: "live" (the worker runs): a batch lingers for company, a failed recording is retried until it
 * succeeds, and outcomes added while one round ran start the next. "closing" (the worker stops): no
 * lingering, no next round by itself, and past CLOSING_FAILURES failures in a row the round gives up —
 * those deliveries are sent again when their leases end (at least once: never lost).
 */
export class OutcomeRecorder {
  mode: "live" | "closing" = "closing";
  private readonly pending: AttemptOutcome[] = [];
  /** The round under way; never left holding a settled promise (that would stop all later recording). */
  private recording: Promise<void> | undefined;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly deps: OutcomeRecorderDeps) {
    this.sleep = deps.sleep ?? sleepFor;
  }

  /** Outcomes not yet recorded. */
  get backlog(): number {
    return this.pending.length;
  }

  /** Whether a recording round is under way. */
  get busy(): boolean {
    return this.recording !== undefined;
  }

  add(outcome: AttemptOutcome): void {
    this.pending.push(outcome);
    void this.flush();
  }

  /** Starts a round unless one is under way; resolves when the outcomes added so far are recorded (or given up on). */
  flush(): Promise<void> {
    // `.finally` runs after this assignment even when nothing was pending.
    this.recording ??= this.lingerThenDrain().finally(() => {
      this.recording = undefined;
      if (this.pending.length > 0 && this.mode === "live") void this.flush();
      this.deps.onSettled?.();
    });
    return this.recording;
  }

  private async lingerThenDrain(): Promise<void> {
    if (this.mode === "live" && this.pending.length < RECORD_BATCH) await this.sleep(RECORD_LINGER_MS);
    await this.drain();
  }

  private async drain(): Promise<void> {
    const { record, log } = this.deps;
    let failures = 0;
    while (this.pending.length > 0) {
      const batch = this.pending.slice(0, RECORD_BATCH);
      try {
        const recorded = await record(batch);
        this.pending.splice(0, batch.length);
        failures = 0;
        if (recorded < batch.length)
          log.warn(
            { fencedOut: batch.length - recorded },
            "outcomes of deliveries whose lease another worker had taken over were not recorded",
          );
      } catch (error) {
        // Until recorded, the claims keep these deliveries from being claimed; past a lease, another
        // claim sends them again.
        failures++;
        log.warn({ err: error, count: batch.length }, "recording delivery outcomes failed; retrying");
        if (this.mode === "closing" && failures > CLOSING_FAILURES) {
          log.error(
            { count: this.pending.length },
            "stopping without recording these outcomes: their deliveries will be sent again when their leases end",
          );
          return;
        }
        await this.sleep(Math.min(MAX_RECORD_BACKOFF_MS, 50 * 2 ** failures));
      }
    }
  }
}
