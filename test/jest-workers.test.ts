import { type ChildProcess, fork, spawn } from "node:child_process";
import path from "node:path";

const root = path.join(__dirname, "..");
const environment = path.join(__dirname, "support", "environment.cjs");

/** How a child process ended, and what it wrote to stdout and stderr. */
async function ended(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
    child.on("close", (...end) => resolve(end)),
  );
  return { code, signal, output };
}

/**
 * Runs a process as Jest runs a worker (forked, with JEST_WORKER_ID; with `ipc: false`, as Jest's own
 * process), which loads the tests' environment module, then lets its event loop run dry.
 */
async function workerRunningDry(
  env: Record<string, string | undefined>,
  { ipc = true }: { ipc?: boolean } = {},
): ReturnType<typeof ended> {
  const script = `
    require(${JSON.stringify(environment)});
    process.stdout.write("written before\\n");
    // What Node's own teardown would still run after a loop ran dry: here, one more turn of the loop.
    process.once("beforeExit", () => setImmediate(() => process.stdout.write("torn down piece by piece\\n")));
    if (process.send) process.disconnect();
  `;
  const options = { env: { ...process.env, ...env }, stdio: "pipe" as const };
  const child = ipc
    ? fork("-e", [script], { ...options, execArgv: [], silent: true })
    : spawn(process.execPath, ["-e", script], options);
  return ended(child);
}

describe("Jest's worker processes (test/support/environment.cjs)", () => {
  it("load the module: it is the tests' environment; and are given seconds, not half of one, to end", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest's configuration is CommonJS
    const config = require("../jest.config.js") as { testEnvironment: string; workerGracefulExitTimeout: number };
    expect(config.testEnvironment).toBe("<rootDir>/test/support/environment.cjs");
    // A worker starved of CPU by the others can take over 500 ms (Jest's default) to reach its end.
    expect(config.workerGracefulExitTimeout).toBeGreaterThanOrEqual(5_000);
  });

  // Jest kills a worker that has not exited in time after it was told to end, and warns that it
  // "failed to exit gracefully": Node's own exit of a worker with gigabytes of heap took longer.
  it("end themselves as soon as their event loop runs dry, with what they wrote written", async () => {
    expect(await workerRunningDry({ JEST_WORKER_ID: "1" })).toEqual({
      code: null,
      signal: "SIGKILL",
      output: "written before\n",
    });
  });

  it("so ended, leave Jest's run passing, with no warning", async () => {
    const jest = spawn(
      process.execPath,
      [
        path.join(root, "node_modules", "jest", "bin", "jest.js"),
        "--testMatch",
        "**/test/fixtures/worker-exit/*.fixture.ts",
        // No timings from an earlier run: with them Jest would run two quick files in its own process.
        "--no-cache",
        "--maxWorkers=2",
      ],
      { cwd: root, stdio: ["ignore", "pipe", "pipe"] },
    );
    const { code: status, output } = await ended(jest);
    expect({ status, passed: output.includes("Tests:       2 passed, 2 total") }).toEqual({ status: 0, passed: true });
    // Both ran in workers, not in Jest's own process.
    const ranIn = [...output.matchAll(/fixture ran in process (\d+)/g)].map((match) => Number(match[1]));
    expect(ranIn).toHaveLength(2);
    expect(ranIn).not.toContain(jest.pid);
    expect(output).not.toMatch(/failed to exit gracefully|crashed|restart/i);
  }, 60_000);

  it("leave any other process that loads the module to end as Node ends it", async () => {
    const notAWorker = await workerRunningDry({ JEST_WORKER_ID: undefined });
    expect(notAWorker).toEqual({ code: 0, signal: null, output: "written before\ntorn down piece by piece\n" });
    // Jest's own process when it runs tests in band: JEST_WORKER_ID set, no IPC channel.
    const inBand = await workerRunningDry({ JEST_WORKER_ID: "1" }, { ipc: false });
    expect(inBand).toEqual({ code: 0, signal: null, output: "written before\ntorn down piece by piece\n" });
  });
});
