// The log's buffer across a process's signals and stop (the full suite's: test/shards/plan.cjs FULL_ONLY).
import { spawn } from "node:child_process";
import path from "node:path";
import { CHILD_NODE_FLAGS } from "./support/child-node";
import { Disposers, testEnvironment } from "./support/harness";
import { spawnServer } from "./support/process";

type Line = Record<string, unknown> & { msg: string; reqId?: string };

describe("the log's buffer", () => {
  it("is written out when the process is signalled while it starts", async () => {
    expect.assertions(3);
    const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, path.resolve(__dirname, "../dist/src/main.js")], {
      env: { PATH: process.env.PATH ?? "", PORT: "0", HOST: "127.0.0.1", DATA_DIR: "memory://", LOG_LEVEL: "info" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const messages: string[] = [];
    let signalled = false;
    child.stdout.setEncoding("utf8");
    let pending = "";
    child.stdout.on("data", (chunk: string) => {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf("\n")) >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        if (!line.startsWith("{")) continue;
        messages.push((JSON.parse(line) as Line).msg);
        // The first line comes from inside the start: the signal arrives before it has finished.
        if (!signalled) {
          signalled = true;
          child.kill("SIGTERM");
        }
      }
    });
    const code = await new Promise((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(messages).toContain("stopped while starting");
    expect(messages).not.toContain("gateway listening");
  }, 60_000);

  it("loses no line of an answered request when the server is stopped with SIGTERM", async () => {
    const environment = await testEnvironment("pglite", {});
    try {
      const server = await spawnServer({ ...environment.env, LOG_LEVEL: "info" }, 90_000);
      const closed = new Promise((resolve) => server.child.on("close", resolve));
      // Nobody reads the server's stdout during a burst of requests, so its pipe fills and the log's
      // asynchronous write waits to retry (EAGAIN); SIGTERM the moment the last is answered, and read
      // again only once the server has stopped listening. The exit must still write every line
      // (pino's synchronous exit flush alone skips the chunk waiting to retry).
      server.child.stdout!.pause();
      // About 600 KB of lines (ids of the longest length kept), well past what the socket holds.
      const ids = Array.from({ length: 1_500 }, (_, i) => `burst-${i}-`.padEnd(128, "x"));
      const answers: Response[] = [];
      for (let at = 0; at < ids.length; at += 100)
        answers.push(
          ...(await Promise.all(
            ids
              .slice(at, at + 100)
              .map((id) => fetch(`${server.url}/carrier/stations/station/FRA`, { headers: { "x-request-id": id } })),
          )),
        );
      server.child.kill("SIGTERM");
      while (
        await fetch(`${server.url}/healthz`).then(
          () => true,
          () => false,
        )
      )
        await new Promise((resolve) => setTimeout(resolve, 50));
      await new Promise((resolve) => setTimeout(resolve, 300));
      server.child.stdout!.resume();
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(await server.exited).toBe(0);
      await closed;
      const logged = new Set(
        server.logs.filter((line) => line.msg === "request completed").map((line) => line.reqId as string),
      );
      expect(ids.filter((id) => !logged.has(id))).toEqual([]);
      expect(server.logs.at(-1)?.msg).toBe("stopped");
    } finally {
      await environment.cleanup();
    }
  }, 150_000);

  it("does not hold the exit for a stdout nobody reads: the stop exits 0, dropping the lines left", async () => {
    const environment = await testEnvironment("pglite", {});
    const disposers = new Disposers();
    try {
      const server = await spawnServer({ ...environment.env, LOG_LEVEL: "info" }, 40_000);
      disposers.add(() => void server.child.kill("SIGKILL"));
      const closed = new Promise((resolve) => server.child.on("close", resolve));
      server.child.stdout!.pause(); // never read again while the process lives
      const ids = Array.from({ length: 1_500 }, (_, i) => `unread-${i}-`.padEnd(128, "x"));
      for (let at = 0; at < ids.length; at += 100)
        await Promise.all(
          ids
            .slice(at, at + 100)
            .map((id) => fetch(`${server.url}/carrier/stations/station/FRA`, { headers: { "x-request-id": id } })),
        );
      server.child.kill("SIGTERM");
      // 0: the stop finished and the exit gave up on stdout before the stop deadline (the watchdog's
      // exit is 1, and an exit that kept retrying the full pipe would never come).
      expect(await server.exited).toBe(0);
      server.child.stdout!.resume();
      await closed;
      // What the full pipe did not take was dropped: the last line ("stopped") never came.
      expect(server.logs.some((line) => line.msg === "stopped")).toBe(false);
    } finally {
      await disposers.disposeAll();
      await environment.cleanup();
    }
  }, 60_000);

  it("is bounded: with stdout not read, lines past the bound are dropped and counted, and the process goes on", async () => {
    // A process logging through the gateway's stdout destination with a 64 KiB bound, whose stdout
    // nobody reads: the pipe fills, the buffer reaches its bound, later lines are dropped.
    const script = `
      const { createLogger, stdout, logLinesDropped } = require(${JSON.stringify(path.resolve(__dirname, "../dist/src/log.js"))});
      const log = createLogger("info", stdout(64 * 1024));
      let i = 0;
      const tick = setInterval(() => {
        for (let n = 0; n < 500; n++) log.info({ i: i++, padding: "x".repeat(200) }, "line");
        if (logLinesDropped() > 0 && i >= 20000) {
          clearInterval(tick);
          process.stderr.write(JSON.stringify({ written: i, dropped: logLinesDropped() }) + "\\n", () => process.exit(0));
        }
      }, 1);
    `;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.pause(); // not read: the pipe fills and stays full
    const exited = new Promise((resolve) => child.on("exit", resolve));
    const report = await new Promise<{ written: number; dropped: number }>((resolve) => {
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.endsWith("\n")) resolve(JSON.parse(stderr) as { written: number; dropped: number });
      });
    });
    child.stdout.resume(); // now read, so that the exit's flush of what the buffer holds can finish
    expect(await exited).toBe(0);
    expect(report.dropped).toBeGreaterThan(0);
    expect(report.dropped).toBeLessThan(report.written);
  }, 60_000);
});
