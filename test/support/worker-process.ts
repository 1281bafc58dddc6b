import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { CHILD_NODE_FLAGS } from "./child-node";

export const WORKER_JS = path.resolve(__dirname, "../../dist/src/worker.js");

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Where it serves /healthz, /readyz and /metrics. */
  readonly url: string;
  readonly logs: Array<Record<string, unknown>>;
  readonly exited: Promise<number | string>;
}

/** What a worker that never started left: its exit code and standard error. */
export interface FailedStart {
  readonly code: number | string;
  readonly stderr: string;
}

/**
 * Runs the built standalone delivery worker (`npm run worker`'s entry point) as its own process and
 * waits until it serves (its "delivery worker running" line); rejects with its exit code and standard
 * error when it exits first.
 */
export async function spawnWorker(env: Record<string, string>, timeoutMs = 30_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, WORKER_JS], {
    env: { PATH: process.env.PATH ?? "", WORKER_PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // "close", not "exit": by then standard error has been read to its end.
  const exited = new Promise<number | string>((resolve) =>
    child.on("close", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`worker did not serve within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === "delivery worker running") {
          clearTimeout(timer);
          resolve(String(entry.url));
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(Object.assign(new Error(`worker exited (${code}); stderr: ${stderr}`), { code, stderr }));
    });
  });
  return { child, url, logs, exited };
}

/**
 * Runs an entry point of dist/ (the gateway's main.js, the worker's worker.js) that is expected to
 * refuse to start; resolves with its exit code and standard error once it has ended.
 */
export async function refusedStart(entry: string, env: Record<string, string>): Promise<FailedStart> {
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, entry], {
    env: { PATH: process.env.PATH ?? "", PORT: "0", WORKER_PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000); // it started after all: fail, never hang
  const code = await new Promise<number | string>((resolve) =>
    child.on("close", (exitCode, signal) => resolve(exitCode ?? signal ?? -1)),
  );
  clearTimeout(timer);
  return { code, stderr };
}
