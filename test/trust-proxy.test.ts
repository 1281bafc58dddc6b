/**
 * TRUST_PROXY: behind a load balancer every connection comes from the balancer, so the per-address
 * budgets must read the client from X-Forwarded-For — but only as the configured proxies write it.
 */
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import { loadConfig } from "../src/config";
import { Disposers, startApp } from "./support/harness";

const unknownKey = () => `Bearer cgw_${randomBytes(32).toString("base64url")}`;
const BUDGET = { AUTH_FAILURE_LIMIT_PER_SECOND: "1", AUTH_FAILURE_LIMIT_BURST: "3", RATE_LIMIT_PER_SECOND: "0" };

async function statusFrom(url: string, forwardedFor: string): Promise<number> {
  const answer = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
    headers: { authorization: unknownKey(), "x-forwarded-for": forwardedFor },
  });
  await answer.arrayBuffer();
  return answer.status;
}

/** The close code of a websocket whose connection_init brings an unknown key. */
function websocketCloseFrom(url: string, forwardedFor: string): Promise<number> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws", {
    headers: { "x-forwarded-for": forwardedFor },
  });
  socket.on("open", () =>
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: unknownKey() } })),
  );
  return new Promise((resolve) => socket.on("close", (code: number) => resolve(code)));
}

describe("the client address behind a load balancer", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("with TRUST_PROXY, budgets each forwarded client on its own, over HTTP and websockets", async () => {
    const { url } = await startApp("pglite", disposers, { ...BUDGET, TRUST_PROXY: "127.0.0.1" });
    for (let i = 0; i < 3; i++) expect(await statusFrom(url, "203.0.113.1")).toBe(401);
    expect(await statusFrom(url, "203.0.113.1")).toBe(429);
    expect(await websocketCloseFrom(url, "203.0.113.1")).toBe(4429);
    // Another client behind the same balancer has a budget of its own.
    expect(await statusFrom(url, "203.0.113.2")).toBe(401);
    expect(await websocketCloseFrom(url, "203.0.113.3")).toBe(4401);
    // A client cannot pose as another by writing the header itself: the balancer appends, and the
    // nearest address the trusted proxy did not add is the client's.
    expect(await statusFrom(url, "203.0.113.9, 203.0.113.1")).toBe(429);
  });

  it("without it, ignores X-Forwarded-For: a client cannot choose its address", async () => {
    const { url } = await startApp("pglite", disposers, BUDGET);
    for (let i = 0; i < 3; i++) expect(await statusFrom(url, `198.51.100.${i}`)).toBe(401);
    expect(await statusFrom(url, "198.51.100.200")).toBe(429);
    expect(await websocketCloseFrom(url, "198.51.100.201")).toBe(4429);
  });

  it("refuses a TRUST_PROXY that is not a list of addresses, ranges or range names", () => {
    expect(loadConfig({ TRUST_PROXY: "10.0.0.0/8, loopback, ::1, fd00::/16" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "loopback",
      "::1",
      "fd00::/16",
    ]);
    for (const bad of [
      "true",
      "*",
      "0.0.0.0/0",
      "::/0",
      "0.0.0.0/1",
      "128.0.0.0/7",
      "2000::/3",
      "0.0.0.0/33",
      "10.0.0.1/8/1",
      "gateway.internal",
    ])
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/TRUST_PROXY/);
  });
});
