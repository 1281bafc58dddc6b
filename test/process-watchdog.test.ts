/**
 * The forced exit must not depend on the event loop's health. A process whose
 * main thread is caught in an endless chain of promise continuations runs no timer and no signal
 * handler (SIGTERM waits in libuv for a loop turn that never comes), so the stop deadline and the
 * check for a blocked loop run on a watchdog thread (src/process-watchdog.ts).
 *
 * Each case runs a small process over the built module (`npm run build`), the way main.ts uses it.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";

const WATCHDOG_JS = path.resolve(__dirname, "../dist/src/process-watchdog.js");

/** The process: the watchdog, a SIGTERM handler that arms the stop deadline, and a loop starved on demand. */
const SCRIPT = `
const { startProcessWatchdog } = require(${JSON.stringify(WATCHDOG_JS)});
const watchdog = startProcessWatchdog({ stallMs: Number(process.env.STALL_MS), service: "watchdog-test" });
const starve = () => { const spin = () => Promise.resolve().then(spin); spin(); };
process.on("SIGTERM", () => {
  console.log("stopping");
  watchdog.stopWithin(Number(process.env.STOP_WITHIN_MS));
  if (process.env.STARVE === "after-signal") starve();
});
console.log("ready");
if (process.env.STARVE === "before-signal") setTimeout(() => { console.log("starving"); starve(); }, 100);
if (process.env.BUSY_MS) {
  // Long synchronous stretches, but the loop turns between them.
  const until = Date.now() + Number(process.env.BUSY_MS);
  const stretch = () => { const end = Date.now() + 300; while (Date.now() < end); if (Date.now() < until) setImmediate(stretch); else console.log("done"); };
  stretch();
}
if (process.env.STAY === "true") setInterval(() => {}, 1_000);
`;

interface Child {
  lines: string[];
  exited: Promise<number | string>;
  kill(signal: NodeJS.Signals): void;
  sawLine(text: string): Promise<void>;
}

function run(env: Record<string, string>): Child {
  const child = spawn(process.execPath, ["-e", SCRIPT], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const waiting: Array<{ text: string; resolve: () => void }> = [];
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    for (const w of waiting.filter((w) => line.includes(w.text))) w.resolve();
  });
  const exited = new Promise<number | string>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  running.push(child);
  return {
    lines,
    exited,
    kill: (signal) => child.kill(signal),
    sawLine: (text) =>
      lines.some((l) => l.includes(text))
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiting.push({ text, resolve });
            void exited.then((code) => reject(new Error(`exited (${code}) before printing "${text}"`)));
          }),
  };
}

const running: Array<ReturnType<typeof spawn>> = [];
afterAll(() => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
});

/** The exit code (or signal) if the process exits within `ms`, else "still running". */
const exitWithin = (child: Child, ms: number) =>
  Promise.race([
    child.exited,
    new Promise<"still running">((resolve) => setTimeout(() => resolve("still running"), ms).unref()),
  ]);

const logLine = (child: Child, msg: string) =>
  child.lines
    .map((l) => (l.startsWith("{") ? (JSON.parse(l) as Record<string, unknown>) : {}))
    .find((l) => l.msg === msg);

describe("the process watchdog", () => {
  it("ends, with code 1, a process whose event loop is starved by promise continuations: SIGTERM cannot reach it", async () => {
    const child = run({ STALL_MS: "1000", STOP_WITHIN_MS: "1000", STARVE: "before-signal", STAY: "true" });
    await child.sawLine("starving");
    child.kill("SIGTERM");
    expect(await exitWithin(child, 10_000)).toBe(1);
    expect(child.lines).not.toContain("stopping"); // the handler never ran: the thread did it
    expect(logLine(child, "the event loop has not turned for 1000 ms; exiting")).toMatchObject({ level: 60 });
  }, 20_000);

  it("enforces the stop deadline, with code 1, when the stop starves the loop after the signal was handled", async () => {
    const child = run({ STALL_MS: "60000", STOP_WITHIN_MS: "1000", STARVE: "after-signal", STAY: "true" });
    await child.sawLine("ready");
    child.kill("SIGTERM");
    expect(await exitWithin(child, 10_000)).toBe(1);
    expect(child.lines).toContain("stopping");
    expect(logLine(child, "stopping took longer than 1000 ms; exiting")).toMatchObject({ level: 60 });
  }, 20_000);

  it("never holds the process: one with nothing left to do exits 0 on its own", async () => {
    const child = run({ STALL_MS: "1000", STOP_WITHIN_MS: "1000" });
    expect(await exitWithin(child, 10_000)).toBe(0);
  }, 20_000);

  it("leaves alone a loop that is busy in stretches shorter than the limit but turns between them", async () => {
    const child = run({ STALL_MS: "1000", STOP_WITHIN_MS: "1000", BUSY_MS: "3000" });
    expect(await exitWithin(child, 15_000)).toBe(0);
    expect(child.lines).toContain("done");
  }, 20_000);
});
