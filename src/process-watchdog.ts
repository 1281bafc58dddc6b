// A helper of the entry points (main.ts, worker.ts): it ends the process, so nothing else imports it.
import path from "node:path";
import { Worker } from "node:worker_threads";

/** How long a stop may take before the process exits regardless (README "Running it under a supervisor"). */
export const STOP_DEADLINE_MS = 8_000;

/** How often the main thread's event loop records that it turned. */
const BEAT_MS = 250;

/** What the watchdog thread is started with (process-watchdog-thread.ts). */
export interface WatchdogThreadData {
  /** One counter the main thread's event loop increments every `beatMs`. */
  readonly beats: Int32Array;
  readonly beatMs: number;
  /** The counter standing still this long ends the process; 0: never. */
  readonly stallMs: number;
  /** The `service` field of the one log line the thread writes before it ends the process. */
  readonly service: string;
}

/** A message from the main thread: the process must be gone within this many milliseconds. */
export interface StopWithinMessage {
  readonly stopWithinMs: number;
}

/**
 * Whether the inspector is open (`node --inspect`): a debugger may then pause the event loop on
 * purpose. False on a Node built without the inspector (importing it throws there).
 */
export async function inspectorOpen(): Promise<boolean> {
  return import("node:inspector").then(
    (inspector) => inspector.url() !== undefined,
    () => false,
  );
}

export interface ProcessWatchdog {
  /**
   * From now, the process has `ms` to end. Past it, `late` runs if the event loop turns (to log and
   * exit), and a second later the watchdog thread ends the process with exit code 1 however busy
   * that loop is. Answers the deadline (a Date.now() time), for what the stop still waits on.
   */
  stopWithin(ms: number, late?: () => void): number;
  /** Stops the heartbeat and the thread. */
  close(): Promise<void>;
}

/**
 * Starts a watchdog on a thread of its own. Timers and signal handlers run on the main thread's
 * event loop, so a loop that stops turning — an endless chain of promise continuations starves
 * timers as surely as a `while (true)` — can neither honour a stop deadline nor even see SIGTERM
 * (Node delivers signals to JavaScript on that loop, and a worker thread gets none). The thread
 * therefore ends the process itself when the loop has not turned for `stallMs` (so a process stuck
 * that way is gone within `stallMs` of getting stuck, signalled or not), and when a stop armed by
 * `stopWithin` overruns. It writes one JSON log line straight to standard output, then exits the
 * process with code 1 (through the inspector's session with the main thread, which runs even while
 * that thread's loop is busy), or, if that has not ended it a second later, sends it SIGKILL.
 *
 * The thread is unref'd: it never keeps the process alive.
 */
export function startProcessWatchdog({
  stallMs,
  service,
  onError,
}: {
  stallMs: number;
  service: string;
  /** The thread failed (it could not start, say): the process runs on without a watchdog. */
  onError?: (error: Error) => void;
}): ProcessWatchdog {
  const beats = new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  const heartbeat = setInterval(() => Atomics.add(beats, 0, 1), BEAT_MS).unref();
  const workerData: WatchdogThreadData = { beats, beatMs: BEAT_MS, stallMs, service };
  const thread = new Worker(path.join(__dirname, "process-watchdog-thread.js"), { workerData });
  thread.unref();
  thread.on("error", (error) => onError?.(error));
  return {
    stopWithin(ms, late) {
      const deadline = Date.now() + ms;
      if (late) setTimeout(late, ms).unref();
      thread.postMessage({ stopWithinMs: ms } satisfies StopWithinMessage);
      return deadline;
    },
    async close() {
      clearInterval(heartbeat);
      await thread.terminate();
    },
  };
}
