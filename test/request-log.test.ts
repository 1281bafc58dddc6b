import { spawn } from "node:child_process";
import path from "node:path";
import { Writable } from "node:stream";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { createLogger } from "../src/log";
import { lazyRequestLogger } from "../src/http/request-log";
import { CHILD_NODE_FLAGS } from "./support/child-node";
import { Disposers, testEnvironment } from "./support/harness";
import { spawnServer } from "./support/process";

type Line = Record<string, unknown> & { msg: string; reqId?: string };

/** A real pino logger (the gateway's own settings) writing into memory. */
function capturedLogger(level: "info" | "debug") {
  const lines: Line[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString().split("\n")) if (text) lines.push(JSON.parse(text) as Line);
      done();
    },
  });
  return { log: createLogger(level, sink), lines };
}

describe("the access log", () => {
  const disposers = new Disposers();
  afterEach(() => disposers.disposeAll());

  async function start(level: "info" | "debug", env: Record<string, string> = {}) {
    const environment = await testEnvironment("pglite", env);
    disposers.add(environment.cleanup);
    const { log, lines } = capturedLogger(level);
    const app = await createApp(loadConfig(environment.env), log);
    disposers.add(() => app.stop());
    return { url: await app.listen(), lines };
  }

  it("writes one line per request, when it is answered, with id, route, status and time", async () => {
    const { url, lines } = await start("info");
    lines.length = 0;
    const asked = [
      { path: "/carrier/stations/station/FRA", init: {}, status: 200, route: "/carrier/stations/station/:IATACode" },
      {
        path: "/carrier/stations/station/frankfurt",
        init: {},
        status: 400,
        route: "/carrier/stations/station/:IATACode",
      },
      { path: "/no/such/route", init: {}, status: 404, route: undefined },
      {
        path: "/carrier/stations/station",
        init: { method: "POST", headers: { "content-type": "application/json" }, body: "{not json" },
        status: 400,
        route: "/carrier/stations/station",
      },
    ];
    const ids: string[] = [];
    for (const { path: asPath, init, status } of asked) {
      const answer = await fetch(`${url}${asPath}`, init);
      expect(answer.status).toBe(status);
      ids.push(answer.headers.get("x-request-id")!);
    }
    await new Promise((resolve) => setImmediate(resolve));

    const requestLines = lines.filter((line) => line.reqId !== undefined);
    expect(requestLines.map((line) => line.msg)).toEqual(asked.map(() => "request completed"));
    asked.forEach(({ path: asPath, status, route }, i) => {
      const line = requestLines[i]!;
      expect(line).toMatchObject({
        level: 30,
        reqId: ids[i],
        req: { method: asked[i]!.init.method ?? "GET", url: asPath, remoteAddress: "127.0.0.1" },
        res: { statusCode: status },
      });
      expect((line.req as { route?: string }).route).toBe(route);
      expect(typeof line.responseTime).toBe("number");
      expect(typeof line.time).toBe("string");
    });
  });

  it("names the forwarded client behind a trusted proxy, for a station read answered before routing as for a routed request", async () => {
    const { url, lines } = await start("info", { TRUST_PROXY: "127.0.0.1" });
    lines.length = 0;
    const headers = { "x-forwarded-for": "203.0.113.7" };
    // The first is answered by the fast lane (http/fast-lane.ts), the second by Fastify's route (404).
    for (const [path, status] of [
      ["/carrier/stations/station/FRA", 200],
      ["/carrier/stations/station/QQQ", 404],
    ] as const)
      expect((await fetch(`${url}${path}`, { headers })).status).toBe(status);
    await new Promise((resolve) => setImmediate(resolve));
    const requestLines = lines.filter((line) => line.reqId !== undefined);
    expect(requestLines.map((line) => (line.req as { remoteAddress?: string }).remoteAddress)).toEqual([
      "203.0.113.7",
      "203.0.113.7",
    ]);
  });

  it("writes a line that is valid JSON whatever the URL and request id hold", async () => {
    const { url, lines } = await start("info");
    lines.length = 0;
    const oddPath = `/carrier/stations/station/FRA?note=%22quoted%22%5C&x="a\\b"&city=Z%C3%BCrich&u=\u00e9`;
    const answer = await fetch(`${url}${oddPath}`, { headers: { "x-request-id": "odd:id.1_2-3" } });
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    const line = lines.find((entry) => entry.reqId === "odd:id.1_2-3")!;
    expect((line.req as { url: string }).url).toBe(
      new URL(`${url}${oddPath}`).pathname + new URL(`${url}${oddPath}`).search,
    );
    expect(line).toMatchObject({ service: "cargo-gateway", msg: "request completed", res: { statusCode: 200 } });
  });

  it("counts dropped lines in /metrics", async () => {
    const { url } = await start("info");
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toMatch(/^gateway_log_lines_dropped_total \d+$/m);
  });

  it("at debug, also a line when each request arrives", async () => {
    const { url, lines } = await start("debug");
    lines.length = 0;
    const answer = await fetch(`${url}/carrier/stations/station/FRA`, { headers: { "x-request-id": "trace-me-1" } });
    expect(answer.status).toBe(200);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.filter((line) => line.reqId === "trace-me-1").map((line) => line.msg)).toEqual([
      "request received",
      "request completed",
    ]);
  });
});

describe("request.log", () => {
  it("is made when first used, with the request id bound and the root logger's redaction", () => {
    const { log, lines } = capturedLogger("info");
    const requestLog = lazyRequestLogger(log, { reqId: "r-1" }, {});
    expect(requestLog.level).toBe("info");
    requestLog.debug("not at info");
    requestLog.warn({ client: { apiKey: "cgw_secret" }, headers: { authorization: "Bearer cgw_secret" } }, "careful");
    expect(lines).toEqual([
      expect.objectContaining({
        reqId: "r-1",
        msg: "careful",
        client: { apiKey: "[redacted]" },
        headers: { authorization: "[redacted]" },
      }),
    ]);
    expect(JSON.stringify(lines)).not.toContain("cgw_secret");
  });

  it("takes a route's own level at once", () => {
    const { log, lines } = capturedLogger("info");
    const requestLog = lazyRequestLogger(log, { reqId: "r-2" }, { level: "error" });
    requestLog.warn("below the route's level");
    requestLog.error("at it");
    expect(lines.map((line) => line.msg)).toEqual(["at it"]);
  });
});

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
