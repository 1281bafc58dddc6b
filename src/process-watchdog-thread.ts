// The watchdog's thread (process-watchdog.ts starts it): only ever run as a worker thread.
import { writeSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import type { StopWithinMessage, WatchdogThreadData } from "./process-watchdog";

const { beats, beatMs, stallMs, service } = workerData as WatchdogThreadData;
/** How long after asking the main thread to exit the process is killed instead. */
const KILL_AFTER_MS = 1_000;

let lastBeat = Atomics.load(beats, 0);
/** How long the beat has stood still, as this thread's checks have seen it. */
let stillMs = 0;
let lastCheck = performance.now();
let ending = false;

setInterval(() => {
  const now = performance.now();
  // A check much later than due means this thread was not running either (the machine suspended,
  // the process stopped): that time is not the main loop's fault, so at most two intervals count.
  const elapsed = Math.min(now - lastCheck, 2 * beatMs);
  lastCheck = now;
  const beat = Atomics.load(beats, 0);
  if (beat !== lastBeat) {
    lastBeat = beat;
    stillMs = 0;
    return;
  }
  stillMs += elapsed;
  if (stallMs > 0 && stillMs >= stallMs) end(`the event loop has not turned for ${stallMs} ms; exiting`);
}, beatMs);

/**
 * The thread is the backstop: it ends a stop this long after the main thread's own deadline, so that
 * a process whose loop still turns exits by its own handler (which says what it was waiting for),
 * and the two never race at the same instant.
 */
const BACKSTOP_AFTER_MS = 1_000;

parentPort!.on("message", ({ stopWithinMs }: StopWithinMessage) => {
  setTimeout(() => end(`stopping took longer than ${stopWithinMs} ms; exiting`), stopWithinMs + BACKSTOP_AFTER_MS);
});

/**
 * Writes the reason as a log line (straight to file descriptor 1: this thread's own stdout is relayed
 * by the main thread's event loop), then exits the process with code 1 from the main thread, which
 * the inspector reaches between two of its JavaScript steps even while its event loop is busy; if
 * the process is still there a second later, SIGKILL.
 */
function end(reason: string): void {
  if (ending) return;
  ending = true;
  try {
    writeSync(1, `${JSON.stringify({ level: 60, time: new Date().toISOString(), service, msg: reason })}\n`);
  } catch {
    // stdout gone: exit all the same
  }
  setTimeout(() => process.kill(process.pid, "SIGKILL"), KILL_AFTER_MS);
  // Loaded only now: a Node built without the inspector fails here, and the kill above ends it.
  import("node:inspector").then(
    ({ Session }) => {
      const session = new Session();
      session.connectToMainThread();
      session.post("Runtime.evaluate", { expression: "process.exit(1)" });
    },
    () => {},
  );
}
