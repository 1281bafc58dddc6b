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
}

/**
 * Runs the built server (`npm start`'s entry point) as its own process and waits until it listens.
 * Tests that kill, signal or restart the server need a real process, not an in-process app.
 */
export async function spawnServer(env: Record<string, string>, timeoutMs = 30_000): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, MAIN_JS], {
    env: {
      PATH: process.env.PATH ?? "",
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "info",
      // As the in-process apps (harness.ts): instances sharing a database must agree on it.
      GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Array<Record<string, unknown>> = [];
  const output: string[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
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
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
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
  return { child, url, logs, output, exited };
}
