import { Writable } from "node:stream";
import { createLogger } from "../src/log";
import { lazyRequestLogger } from "../src/http/request-log";
import { Disposers, startApp } from "./support/harness";

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
    const { log, lines } = capturedLogger(level);
    const { url } = await startApp("pglite", disposers, env, { log });
    return { url, lines };
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
