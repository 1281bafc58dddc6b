/**
 * Limits shared through Redis while Redis fails: stopped (connections refused) or stalled (connected,
 * never answering). Requests are still answered — each instance applies its own limits, never a 500,
 * never a wait for Redis — the operator sees it on /metrics and in the log, and the limits are shared
 * again once Redis is back.
 */
import { createServer, type Server, type Socket, connect } from "node:net";
import pino from "pino";
import type WebSocket from "ws";
import { type App, createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { describeBackend, Disposers, startApp, testEnvironment } from "./support/harness";
import { freePort, type PrivateService, startPrivateRedis } from "./support/private-services";
import type Redis from "ioredis";
import {
  type Answer,
  AT_CAP,
  type Counted,
  expectDecidedByWindows,
  freshKey,
  freshKeyWithId,
  lastWindow,
  limitsCountedIn,
  listSubscriptions,
  openSocket,
  redisReader,
  requestsCounter,
  sendCounted,
  spendLocalBucket,
} from "./support/shared-limits";
import { metric } from "./support/ws-protocol";

const REQUESTS = { perSecond: 1, burst: 5 };
const AUTH_FAILURES = { perSecond: 1, burst: 4 };
const LIMITS = {
  // Shared, 5 requests per window of 5 s (shared-buckets.ts); each instance's own bucket: a burst of 5
  // refilled at 1 a second.
  RATE_LIMIT_PER_SECOND: String(REQUESTS.perSecond),
  RATE_LIMIT_BURST: String(REQUESTS.burst),
  AUTH_FAILURE_LIMIT_PER_SECOND: String(AUTH_FAILURES.perSecond),
  AUTH_FAILURE_LIMIT_BURST: String(AUTH_FAILURES.burst),
  LIVE_MAX_CONNECTIONS_PER_KEY: "2",
  LIVE_CONNECTION_LEASE_MS: "3000",
};

/** An app of this process whose log lines are kept (startApp's are silent). */
async function startLoggedApp(disposers: Disposers, env: Record<string, string>) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const environment = await testEnvironment("postgres", env);
  disposers.add(environment.cleanup);
  const app = await createApp(loadConfig(environment.env), log);
  disposers.add(() => app.stop());
  const url = await app.listen();
  return { app, url, env: environment.env, lines };
}

/**
 * Requests with a fresh key, alternating over `urls`, until the shared window of the last one has
 * refused one on each URL; asserts that the one window every instance counts in decided each of them
 * (test/support/shared-limits.ts, `expectDecidedByWindows`), and that the last granted `REQUESTS.burst`.
 */
async function expectOneSharedBudget(redis: Redis, app: App, urls: string[]): Promise<void> {
  const { key, keyId } = await freshKeyWithId(app, `shared over ${urls.length}`);
  const refusedOnEach = (answers: Array<Counted<Answer & { url: string }>>) => {
    const refused = lastWindow(answers).filter((answer) => answer.status === 429);
    return urls.every((url) => refused.some((answer) => answer.url === url));
  };
  const answers = await sendCounted(
    redis,
    requestsCounter(keyId),
    async (i) => {
      const url = urls[i % urls.length]!;
      return { ...(await listSubscriptions(url, `Bearer ${key}`)), url };
    },
    { enough: refusedOnEach, max: 100 },
  );
  expect(refusedOnEach(answers)).toBe(true);
  expectDecidedByWindows(answers, REQUESTS.burst, 200);
  expect(lastWindow(answers).filter((answer) => answer.status === 200)).toHaveLength(REQUESTS.burst);
}

describeBackend("postgres")("shared limits while Redis is stopped and started again", () => {
  const disposers = new Disposers();
  let redis: PrivateService;
  let reader: Redis;
  let a: Awaited<ReturnType<typeof startLoggedApp>>;
  let b: Awaited<ReturnType<typeof startApp>>;
  const sockets: WebSocket[] = [];
  const track = (socket: WebSocket) => void sockets.push(socket);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    a = await startLoggedApp(disposers, { REDIS_URL: redis.url, ...LIMITS });
    b = await startApp("postgres", disposers, { REDIS_URL: redis.url, ...LIMITS, DATABASE_URL: a.env.DATABASE_URL! });
    disposers.add(() => sockets.forEach((socket) => socket.terminate()));
    await limitsCountedIn(a.url, "redis");
    await limitsCountedIn(b.url, "redis");
  });
  afterAll(() => disposers.disposeAll());

  it("applies each instance's own limits while Redis is down, and shares them again once it is back", async () => {
    const sharedSocketsKey = await freshKey(a.app, "sockets across the outage");
    await redis.stop();
    await limitsCountedIn(a.url, "memory");
    await limitsCountedIn(b.url, "memory");

    // Requests: each instance grants the key its own budget of 5 (a bucket refilled at 1 a second);
    // nothing fails for want of Redis.
    const key = `Bearer ${await freshKey(a.app, "during the outage")}`;
    const onA = await spendLocalBucket(() => listSubscriptions(a.url, key), { ...REQUESTS, granted: 200 });
    const onB = await spendLocalBucket(() => listSubscriptions(b.url, key), { ...REQUESTS, granted: 200 });
    for (const answer of [...onA, ...onB].filter((x) => x.status === 429)) {
      expect(answer).toMatchObject({ code: "RATE_LIMITED" });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Failed authentications: each instance budgets the address itself (4 each).
    const unknown = "Bearer cgw_this-key-was-never-issued-by-anyone-0001";
    for (const url of [a.url, b.url])
      await spendLocalBucket(() => listSubscriptions(url, unknown, "127.0.0.31"), { ...AUTH_FAILURES, granted: 401 });
    // Websockets: the cap of 2 counted by each instance alone; one socket on each for now.
    expect((await openSocket(a.url, sharedSocketsKey, track)).outcome).toBe("acked");
    expect((await openSocket(b.url, sharedSocketsKey, track)).outcome).toBe("acked");

    for (const limit of ["requests", "auth_failures", "websockets"]) {
      expect(await metric(a.url, `gateway_rate_limit_fallbacks_total{limit="${limit}"}`)).toBeGreaterThan(0);
    }
    expect(a.lines).toContainEqual(
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^redis unavailable for limits/) }),
    );

    await redis.start();
    reader = await redisReader(redis.url);
    disposers.add(async () => void (await reader.quit()));
    await limitsCountedIn(a.url, "redis");
    await limitsCountedIn(b.url, "redis");
    expect(a.lines).toContainEqual(
      expect.objectContaining({ level: 30, msg: "redis reachable again: limits are shared across instances" }),
    );

    // One budget again: 5 in all over both instances.
    await expectOneSharedBudget(reader, a.app, [a.url, b.url]);
    // The sockets opened during the outage count again (Redis came back empty): the key is at its cap of 2.
    const third = await openSocket(a.url, sharedSocketsKey, track);
    expect(third.outcome).toMatchObject({ code: 4429, reason: expect.stringMatching(AT_CAP) });
  });
});

/**
 * A TCP relay to Redis that can stall: while stalled it stops reading from the gateway, so commands
 * wait in socket buffers unanswered (as with a Redis that hangs), and are answered in order once it
 * flows again.
 */
async function startStallingRelay(
  redisUrl: string,
): Promise<{ url: string; stall(on: boolean): void; close(): Promise<void> }> {
  const target = new URL(redisUrl);
  const clients = new Set<Socket>();
  let stalled = false;
  const server: Server = createServer((client) => {
    clients.add(client);
    const upstream = connect(Number(target.port), target.hostname);
    client.on("data", (chunk) => upstream.write(chunk));
    upstream.pipe(client);
    if (stalled) client.pause();
    const end = () => {
      clients.delete(client);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `redis://127.0.0.1:${port}`,
    stall(on) {
      stalled = on;
      for (const client of clients) {
        if (on) client.pause();
        else client.resume();
      }
    },
    async close() {
      for (const client of clients) client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describeBackend("postgres")("shared limits while Redis stops answering", () => {
  const disposers = new Disposers();
  let relay: Awaited<ReturnType<typeof startStallingRelay>>;
  let reader: Redis;
  let app: Awaited<ReturnType<typeof startLoggedApp>>;
  const sockets: WebSocket[] = [];
  const track = (socket: WebSocket) => void sockets.push(socket);

  beforeAll(async () => {
    const redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    reader = await redisReader(redis.url); // straight to Redis, not through the relay
    disposers.add(async () => void (await reader.quit()));
    relay = await startStallingRelay(redis.url);
    disposers.add(() => relay.close());
    app = await startLoggedApp(disposers, { REDIS_URL: relay.url, ...LIMITS });
    disposers.add(() => sockets.forEach((socket) => socket.terminate()));
    await limitsCountedIn(app.url, "redis");
  });
  afterAll(async () => {
    relay.stall(false); // let the app's Redis connections close normally
    await disposers.disposeAll();
  });

  it("answers every request from its own limits instead of waiting, and shares them again when Redis answers", async () => {
    relay.stall(true);
    // Each of these would wait for Redis forever without a bound (the request helper gives up after 15 s).
    const key = `Bearer ${await freshKey(app.app, "stalled")}`;
    await spendLocalBucket(() => listSubscriptions(app.url, key), { ...REQUESTS, granted: 200 });
    expect((await openSocket(app.url, await freshKey(app.app, "stalled sockets"), track)).outcome).toBe("acked");
    await limitsCountedIn(app.url, "memory");
    expect(await metric(app.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBeGreaterThan(0);
    expect(app.lines).toContainEqual(
      expect.objectContaining({ level: 40, msg: expect.stringMatching(/^redis unavailable for limits/) }),
    );

    relay.stall(false);
    await limitsCountedIn(app.url, "redis");
    const fallbacks = await metric(app.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}');
    await expectOneSharedBudget(reader, app.app, [app.url]);
    // Decided in Redis again, not by the instance alone.
    expect(await metric(app.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBe(fallbacks);
  });
});
