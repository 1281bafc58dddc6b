import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { LOOP_HOLD_PROBE, watchLoopOf } from "./support/process";

/**
 * The probe the burst tests read a spawned gateway's held loop from (support/loop-hold-probe.cjs): a
 * process that spins its loop's thread is seen holding it, one whose loop thread sleeps while other
 * threads spin is not.
 */
const HOLD_MS = 300;

/** A node process with the probe preloaded; each message names what its loop then does. */
const TARGET = `
const { Worker } = require("node:worker_threads");
// The main thread's CPU, as the probe reads it.
const { threadCpuMs: cpuMs } = require(${JSON.stringify(path.join(__dirname, "support", "thread-cpu.cjs"))});
// The probe leaves the IPC channel unreferenced, as a gateway's server keeps it alive: so does this.
const alive = setInterval(() => {}, 1000);
process.on("message", (what) => {
  // Work: HOLD_MS of this thread's CPU, however long the machine makes that take.
  if (what === "spin") for (const end = cpuMs() + ${HOLD_MS}; cpuMs() < end; );
  // No work: HOLD_MS of wall clock asleep.
  if (what === "sleep") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${HOLD_MS});
  // Asleep while another thread does HOLD_MS of work, until that thread wakes it.
  if (what === "spin elsewhere") {
    const flag = new Int32Array(new SharedArrayBuffer(4));
    // The worker spins for HOLD_MS of wall clock: the main thread's CPU, which it would read, stands still.
    const worker = new Worker(
      "const { workerData: flag } = require('node:worker_threads');" +
        "for (const end = performance.now() + ${HOLD_MS}; performance.now() < end; );" +
        "Atomics.store(flag, 0, 1); Atomics.notify(flag, 0);",
      { eval: true, workerData: flag },
    );
    worker.on("online", () => {
      Atomics.wait(flag, 0, 0, 30000);
      process.send({ done: what });
    });
    return;
  }
  if (what !== "stop") process.send({ done: what });
  else clearInterval(alive), process.disconnect();
});
`;

describe("the loop-hold probe", () => {
  let child: ChildProcess;

  beforeAll(() => {
    child = spawn(process.execPath, ["--require", LOOP_HOLD_PROBE, "-e", TARGET], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
  });
  afterAll(async () => {
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.send("stop");
    await exited;
  });

  const holdWhile = async (what: string) => {
    const loop = watchLoopOf(child);
    await loop.reset();
    await new Promise<void>((resolve) => {
      const done = (message: { done?: string }) => {
        if (message.done !== what) return;
        child.off("message", done);
        resolve();
      };
      child.on("message", done);
      child.send(what);
    });
    // Turns after the hold, so the probe's timer has seen it end.
    await new Promise((resolve) => setTimeout(resolve, 50));
    return loop.read();
  };

  it("counts a loop held by its own thread's work", async () => {
    const held = await holdWhile("spin");
    expect(held.wallMs).toBeGreaterThanOrEqual(HOLD_MS);
    expect(held.cpuMs).toBeGreaterThanOrEqual(HOLD_MS);
    expect(held.spentCpuMs).toBeGreaterThanOrEqual(HOLD_MS);
  });

  it("does not count a loop that waited without work, nor other threads' work", async () => {
    const asleep = await holdWhile("sleep");
    expect(asleep.cpuMs).toBeLessThan(HOLD_MS / 3);
    const elsewhere = await holdWhile("spin elsewhere");
    expect(elsewhere.cpuMs).toBeLessThan(HOLD_MS / 3);
    // Nor in what the main thread spent since the reset, which the burst tests divide by.
    expect(elsewhere.spentCpuMs).toBeLessThan(HOLD_MS / 3);
  });
});
