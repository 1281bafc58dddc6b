/** Size, rate and count limits, each answered with its status (HTTP) or close code (websocket). */
import http from "node:http";
import WebSocket from "ws";
import type { App } from "../src/app";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson, postJson } from "./support/http";
import { freshKey } from "./support/shared-limits";
import { until } from "./support/webhooks";
import { frameText, metric } from "./support/ws-protocol";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const SUBSCRIBE = 'subscription { awbStatusChanged(awb: "020-12345675") { state } }';

/** A graphql-transport-ws message from the server. */
interface ServerMessage {
  type: string;
  id?: string;
  payload?: unknown;
}

/** A raw graphql-transport-ws socket, acknowledged; resolves its close code when the server closes it. */
async function openSocket(
  url: string,
  key: string,
  disposers: Disposers,
): Promise<{ socket: WebSocket; messages: ServerMessage[]; closed: Promise<{ code: number; reason: string }> }> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
  disposers.add(() => socket.terminate());
  const messages: ServerMessage[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  socket.on("message", (data) => messages.push(JSON.parse(frameText(data)) as ServerMessage));
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${key}` } }));
  // Acknowledged, or closed at once (a refused third connection): either way the caller goes on.
  await Promise.race([
    new Promise((resolve) =>
      socket.on("message", (data) => JSON.parse(frameText(data)).type === "connection_ack" && resolve(undefined)),
    ),
    closed,
  ]);
  return { socket, messages, closed };
}

describe("limits", () => {
  const disposers = new Disposers();
  let url: string;
  let app: App;
  beforeAll(async () => {
    ({ url, app } = await startApp("pglite", disposers, {
      RATE_LIMIT_PER_SECOND: "2",
      RATE_LIMIT_BURST: "8",
      LIVE_MAX_CONNECTIONS_PER_KEY: "2",
      LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "2",
    }));
  });
  afterAll(() => disposers.disposeAll());
  // Each test that spends a key's tokens or websocket slots has a key of its own, so no test waits
  // for another's bucket to refill or its sockets to close.

  it("answers headers over 16 KiB with 431 and bodies over 1 MiB with 413, both problem+json", async () => {
    const big = await fetch(`${url}/carrier/stations/stationcodes`, { headers: { "x-padding": "a".repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(big.headers.get("content-type")).toBe("application/problem+json; charset=utf-8");
    expect((await big.json()).code).toBe("HEADERS_TOO_LARGE");
    const body = await postJson(
      `${url}/carrier/handling/shipment/events`,
      JSON.stringify({ awb: "020-12345675", state: "DEP", flight: "x".repeat(1_100_000) }),
      admin,
    );
    expect(body.status).toBe(413);
    expect(body.body.code).toBe("PAYLOAD_TOO_LARGE");
    const ok = await getJson(`${url}/carrier/stations/stationcodes`);
    expect(ok.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("answers a websocket upgrade anywhere but /graphql with a 404 problem+json", async () => {
    const response = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
      const request = http.request(`${url}/live`, {
        headers: {
          connection: "Upgrade",
          upgrade: "websocket",
          "sec-websocket-version": "13",
          "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
        },
      });
      request.on("response", (res) => {
        let body = "";
        res.on("data", (chunk) => (body += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"]), body }));
      });
      request.on("upgrade", () => reject(new Error("upgraded")));
      request.on("error", reject);
      request.end();
    });
    expect(response.status).toBe(404);
    expect(response.type).toBe("application/problem+json; charset=utf-8");
    expect(JSON.parse(response.body)).toMatchObject({
      status: 404,
      code: "NOT_FOUND",
      detail: "No websocket endpoint at /live; use /graphql",
    });
  });

  it("answers requests over a key's rate with 429 and Retry-After", async () => {
    const key = { authorization: `Bearer ${await freshKey(app, "rate")}` };
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 12; i++) {
      const response = await fetch(`${url}/carrier/handling/shipment/subscribe`, { headers: key });
      statuses.push(response.status);
      if (response.status === 429) retryAfter = response.headers.get("retry-after");
    }
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(8);
    expect(statuses).toContain(429);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it("closes a websocket whose key sends messages over its rate with 4429", async () => {
    const { socket, closed } = await openSocket(url, await freshKey(app, "socket rate"), disposers);
    for (let i = 0; i < 20; i++) socket.send(JSON.stringify({ type: "ping" }));
    const { code, reason } = await closed;
    expect(code).toBe(4429);
    expect(reason).toContain("requests a second");
  });

  it("closes a key's third websocket with 4429 and refuses a third operation on one socket", async () => {
    const key = await freshKey(app, "socket cap");
    const first = await openSocket(url, key, disposers);
    await openSocket(url, key, disposers);
    const third = await openSocket(url, key, disposers);
    expect((await third.closed).code).toBe(4429);

    first.socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: SUBSCRIBE } }));
    first.socket.send(JSON.stringify({ id: "2", type: "subscribe", payload: { query: SUBSCRIBE } }));
    first.socket.send(JSON.stringify({ id: "3", type: "subscribe", payload: { query: SUBSCRIBE } }));
    await until(() => first.messages.some((m) => m.id === "3"), { what: "an answer to the third subscribe" });
    // The first two run (the third is refused before their subscribes, which look the key up, finish).
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === 2, {
      what: "the first two subscriptions running",
    });
    const refusal = first.messages.find((m) => m.id === "3");
    expect(refusal).toMatchObject({ type: "error", payload: [{ extensions: { code: "RATE_LIMITED" } }] });
    expect(first.messages.filter((m) => m.type === "error" && m.id !== "3")).toEqual([]);
  });
});
