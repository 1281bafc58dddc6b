import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { CHILD_NODE_FLAGS } from "./child-node";

export const MAIN_JS = path.resolve(__dirname, "../../dist/src/main.js");

export interface ServerProcess {
  readonly child: ChildProcess;
  readonly url: string;
  /** Every JSON log line so far. */
  readonly logs: Array<Record<string, unknown>>;
  /** Every line of standard output so far, JSON or not. */
  readonly output: string[];
  /** Resolves with the exit code (or the signal's name). */
  readonly exited: Promise<number | string>;
  /** Started with `watchLoop`: how long the gateway held its event loop (loop-hold-probe.cjs). */
  readonly loop?: LoopWatch;
}

export interface LoopHold {
  /** The most CPU the main thread spent between two turns of the loop, at most the wall time between them. */
  readonly cpuMs: number;
  /** The wall time of that stretch. */
  readonly wallMs: number;
  /** All the main thread's CPU since the reset: what the longest hold is a part of. */
  readonly spentCpuMs: number;
}

export interface LoopWatch {
  /** Forgets the holds so far: the next read covers what comes after. */
  reset(): Promise<void>;
  /** The longest hold since the start or the last reset, one still under way included. */
  read(): Promise<LoopHold>;
}

export const LOOP_HOLD_PROBE = path.resolve(__dirname, "loop-hold-probe.cjs");

/** Asks the probe in `child` over its IPC channel, and waits for its answer. */
export function watchLoopOf(child: ChildProcess): LoopWatch {
  const ask = (question: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const answer = (message: Record<string, unknown>) => {
        if (`loop-hold:${String(message?.loopHold)}` !== question) return;
        child.off("message", answer);
        resolve(message);
      };
      child.on("message", answer);
      child.send(question, (error) => error && reject(error));
    });
  return {
    reset: async () => void (await ask("loop-hold:reset")),
    read: async () => {
      const { cpuMs, wallMs, spentCpuMs } = await ask("loop-hold:read");
      return { cpuMs: Number(cpuMs), wallMs: Number(wallMs), spentCpuMs: Number(spentCpuMs) };
    },
  };
}

/**
 * Runs the built server (`npm start`'s entry point) as its own process and waits until it listens.
 * Tests that kill, signal or restart the server need a real process, not an in-process app.
 */
export async function spawnServer(
  env: Record<string, string>,
  timeoutMs = 30_000,
  { watchLoop = false }: { watchLoop?: boolean } = {},
): Promise<ServerProcess> {
  const probe = watchLoop ? ["--require", LOOP_HOLD_PROBE] : [];
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, ...probe, MAIN_JS], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      // As the in-process apps (harness.ts): instances sharing a database must agree on it.
      GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "0",
      ...env,
    },
    stdio: watchLoop ? ["ignore", "pipe", "pipe", "ipc"] : ["ignore", "pipe", "pipe"],
  });
  const { stdout, stderr: errors } = child;
  if (!stdout || !errors) throw new Error("the server was started without its output piped");
  const logs: Array<Record<string, unknown>> = [];
  const output: string[] = [];
  let stderr = "";
  errors.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? -1)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL"); // never leave an orphan that keeps the test run alive
      reject(
        new Error(
          `server did not listen within ${timeoutMs} ms (it must log "gateway listening", so LOG_LEVEL must be info or lower); stderr: ${stderr}`,
        ),
      );
    }, timeoutMs);
    readline.createInterface({ input: stdout }).on("line", (line) => {
      output.push(line);
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        if (entry.msg === "gateway listening") {
          clearTimeout(timer);
          resolve(String(entry.url));
        }
      } catch {
        // not a log line
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}) before listening; stderr: ${stderr}`));
    });
  });
  return { child, url, logs, output, exited, ...(watchLoop ? { loop: watchLoopOf(child) } : {}) };
}
