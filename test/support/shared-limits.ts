/** Helpers for the tests of limits shared across instances through Redis (test/limits.shared*.test.ts). */
import http from "node:http";
import Redis from "ioredis";
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
  return (await freshKeyWithId(app, name)).key;
}

/** `freshKey` with its id, the name its budgets are kept under in Redis (`cgw:limits:<limit>:<keyId>`). */
export async function freshKeyWithId(app: App, name: string): Promise<{ key: string; keyId: string }> {
  const { clientId } = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
  return app.services.clients.issueKey(clientId, ["subscriptions", "events:read"]);
}

/** Redis keys of the shared budgets (src/http/rate-limit.ts, auth-failures.ts; live/connection-cap.ts). */
export const requestsCounter = (keyId: string) => `cgw:limits:requests:${keyId}`;
export const authFailuresCounter = (address: string) => `cgw:limits:auth-failures:${address}`;
export const socketSlots = (keyId: string) => `cgw:limits:websockets:${keyId}`;

/** A test's own connection to the Redis the instances share, to read what they keep there. */
export async function redisReader(url: string): Promise<Redis> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  return redis;
}

/** An answer with its place in the shared fixed window that counted it (`sendCounted`). */
export type Counted<T> = T & { place: number | null };

/**
 * Sends `send(i)` one at a time until `enough` holds of what was answered (or `max` were sent),
 * reading after each the Redis counter `counterKey` of the shared fixed window: rate-limiter-flexible
 * counts every attempt in it, refused ones too, so the count is that request's place in its window,
 * over every instance, however long the requests took. A window that ended before the next request
 * starts again at 1; `place` is null when the window ended between the request and the read.
 */
export async function sendCounted<T>(
  redis: Redis,
  counterKey: string,
  send: (i: number) => Promise<T>,
  { enough, max }: { enough: (answers: Array<Counted<T>>) => boolean; max: number },
): Promise<Array<Counted<T>>> {
  const answers: Array<Counted<T>> = [];
  while (answers.length < max && !enough(answers)) {
    const answer = await send(answers.length);
    const count = await redis.get(counterKey);
    answers.push({ ...answer, place: count === null ? null : Number(count) });
  }
  return answers;
}

/** The answers counted in the window the last one was counted in (from the last place 1 on). */
export function lastWindow<T>(answers: Array<Counted<T>>): Array<Counted<T>> {
  let start = 0;
  answers.forEach((answer, i) => {
    if (answer.place === 1) start = i;
  });
  return answers.slice(start);
}

/**
 * Asserts that one shared window of `points` a time decided every answer: each request took the next
 * place in the window every instance counts in (or the first of a new window), and was answered
 * `granted` at places 1…points and 429 past them.
 */
export function expectDecidedByWindows(
  answers: Array<Counted<{ status: number }>>,
  points: number,
  granted: number,
): void {
  answers.forEach((answer, i) => {
    const before = i === 0 ? 0 : answers[i - 1]!.place;
    if (answer.place === null) {
      // Its window ended before the read, so the next request starts a new one.
      if (i + 1 < answers.length)
        expect({ request: i + 1, place: answers[i + 1]!.place }).toEqual({ request: i + 1, place: 1 });
      return;
    }
    if (before !== null && answer.place !== 1)
      expect({ request: i, place: answer.place }).toEqual({ request: i, place: before + 1 });
    expect({ request: i, place: answer.place, status: answer.status }).toEqual({
      request: i,
      place: answer.place,
      status: answer.place <= points ? granted : 429,
    });
  });
}

/**
 * Sends `send(i)` one at a time until one is refused 429 (or `max` were sent) to a budget kept by
 * one instance alone, a token bucket of `burst` refilled at `perSecond`. Asserts what the bucket must
 * have done whatever the machine's speed: the first `burst` granted, and at most one more granted for
 * each second the requests took. Answers them.
 */
export async function spendLocalBucket(
  send: (i: number) => Promise<Answer>,
  { burst, perSecond, granted, max = 4 * burst }: { burst: number; perSecond: number; granted: number; max?: number },
): Promise<Answer[]> {
  const answers: Answer[] = [];
  const started = performance.now();
  while (answers.length < max && answers.at(-1)?.status !== 429) answers.push(await send(answers.length));
  const seconds = (performance.now() - started) / 1000;
  const statuses = answers.map((answer) => answer.status);
  const grantedCount = statuses.filter((status) => status === granted).length;
  expect(statuses.slice(0, burst)).toEqual(Array.from({ length: burst }, () => granted));
  expect(statuses.at(-1)).toBe(429);
  expect(grantedCount + 1).toBe(statuses.length);
  expect(grantedCount).toBeLessThanOrEqual(burst + Math.floor(seconds * perSecond));
  return answers;
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
