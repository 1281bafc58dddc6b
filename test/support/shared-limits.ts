/** Helpers for the tests of limits shared across instances through Redis (test/limits.shared*.test.ts). */
import http from "node:http";
import WebSocket from "ws";
import type { App } from "../../src/app";
import { REQUEST_TIMEOUT_MS } from "./http";
import { frameText, metric } from "./ws-protocol";
import { until } from "./webhooks";

/** Resolves once the instance at `url` reports its limits counted in `store` (the gauge on /metrics). */
export function limitsCountedIn(url: string, store: "redis" | "memory", what = `${url} counting limits in ${store}`) {
  return until(async () => (await metric(url, `gateway_rate_limit_store{store="${store}"}`)) === 1, {
    what,
    timeoutMs: 30_000,
  });
}

/** A new client's API key (both scopes the tests use), so each test has a budget of its own. */
export async function freshKey(app: App, name: string): Promise<string> {
  const { clientId } = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
  return (await app.services.clients.issueKey(clientId, ["subscriptions", "events:read"])).key;
}

export interface Answer {
  status: number;
  retryAfter: string | undefined;
  type: string | undefined;
  code: string | undefined;
}

/**
 * GET of the caller's subscriptions (a route that needs a key), from `localAddress` when given (any
 * 127.0.0.x reaches the server from its own address, with a failure budget of its own).
 */
export function listSubscriptions(url: string, authorization: string, localAddress?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get(
      `${url}/carrier/handling/shipment/subscribe`,
      { headers: { authorization }, timeout: REQUEST_TIMEOUT_MS, ...(localAddress ? { localAddress } : {}) },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (body += chunk));
        response.on("end", () => {
          const retryAfter = response.headers["retry-after"];
          const type = response.headers["content-type"];
          let code: string | undefined;
          try {
            code = (JSON.parse(body) as { code?: string }).code;
          } catch {
            code = undefined;
          }
          resolve({ status: response.statusCode!, retryAfter, type, code });
        });
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    request.on("error", reject);
  });
}

export interface OpenedSocket {
  socket: WebSocket;
  /** "acked", or the close the server answered connection_init with. */
  outcome: "acked" | { code: number; reason: string };
  closed: Promise<{ code: number; reason: string }>;
}

/** A graphql-transport-ws socket with `key`'s connection_init: acknowledged, or closed by the server. */
export async function openSocket(url: string, key: string, track: (socket: WebSocket) => void): Promise<OpenedSocket> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
  track(socket);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const acked = new Promise<"acked">((resolve) =>
    socket.on("message", (data) => {
      if ((JSON.parse(frameText(data)) as { type: string }).type === "connection_ack") resolve("acked");
    }),
  );
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${key}` } }));
  const outcome = await Promise.race([acked, closed]);
  return { socket, outcome, closed };
}

/** Closes a socket and resolves once the close handshake is done. */
export async function closeSocket(opened: OpenedSocket): Promise<void> {
  opened.socket.close(1000);
  await opened.closed;
}

/** A refusal because the key holds its cap of websockets (not its request rate: both close with 4429). */
export const AT_CAP = /open websockets \(at most \d+\)/;
