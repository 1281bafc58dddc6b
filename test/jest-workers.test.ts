import { fork, spawn } from "node:child_process";
import path from "node:path";

const environment = path.join(__dirname, "support", "environment.cjs");

/**
 * Runs a process as Jest runs a worker (forked, with JEST_WORKER_ID; `ipc: false`, as Jest's own
 * process), which loads the tests'
 * environment module, then lets its event loop run dry; what it printed and its exit code.
 */
async function workerRunningDry(
  env: Record<string, string | undefined>,
  { ipc = true }: { ipc?: boolean } = {},
): Promise<{ code: number | null; output: string }> {
  const script = `
    require(${JSON.stringify(environment)});
    // What Node's own teardown would still run after a loop ran dry: here, one more turn of the loop.
    process.once("beforeExit", () => setImmediate(() => process.stdout.write("torn down piece by piece\\n")));
    if (process.send) process.disconnect();
  `;
  const options = { env: { ...process.env, ...env }, stdio: "pipe" as const };
  const child = ipc
    ? fork("-e", [script], { ...options, execArgv: [], silent: true })
    : spawn(process.execPath, ["-e", script], options);
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { code, output };
}

describe("Jest's worker processes (test/support/environment.cjs)", () => {
  it("load the module: it is the tests' environment", () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest's configuration is CommonJS
    const config = require("../jest.config.js") as { testEnvironment: string };
    expect(config.testEnvironment).toBe("<rootDir>/test/support/environment.cjs");
  });

  // Jest kills a worker that has not exited half a second after it was told to end, and warns that it
  // "failed to exit gracefully": a worker with gigabytes of heap took longer to tear it down.
  it("exit as soon as their event loop runs dry, skipping the teardown of their heap", async () => {
    expect(await workerRunningDry({ JEST_WORKER_ID: "1" })).toEqual({ code: 0, output: "" });
  });

  it("leave any other process that loads the module to end as Node ends it", async () => {
    const notAWorker = await workerRunningDry({ JEST_WORKER_ID: undefined });
    expect(notAWorker).toEqual({ code: 0, output: "torn down piece by piece\n" });
    // Jest's own process when it runs tests in band: JEST_WORKER_ID set, no IPC channel.
    const inBand = await workerRunningDry({ JEST_WORKER_ID: "1" }, { ipc: false });
    expect(inBand).toEqual({ code: 0, output: "torn down piece by piece\n" });
  });
});
