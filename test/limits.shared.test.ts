/**
 * Limits shared across instances through Redis: two gateways on one PostgreSQL database and one Redis
 * give a key (or a client address) ONE budget between them, where limits kept by each instance would
 * have given it one per instance. A third, separate process that dies holding websockets gives their
 * slots back within its lease.
 */
import type WebSocket from "ws";
import { spawnServer, type ServerProcess } from "./support/process";
import { type PrivateService, startPrivateRedis } from "./support/private-services";
import { describeBackend, Disposers, startApp } from "./support/harness";
import type Redis from "ioredis";
import {
  type Answer,
  AT_CAP,
  authFailuresCounter,
  closeSocket,
  type Counted,
  expectDecidedByWindows,
  freshKeyWithId,
  lastWindow,
  limitsCountedIn,
  listSubscriptions,
  openSocket,
  type OpenedSocket,
  redisReader,
  requestsCounter,
  sendCounted,
  socketSlots,
} from "./support/shared-limits";
import { until } from "./support/webhooks";
import { metric } from "./support/ws-protocol";
import { itInFullSuite } from "./support/suite";

type Started = Awaited<ReturnType<typeof startApp>>;
type OnInstance = Counted<Answer & { on: "a" | "b" }>;

/** Whether the window of the last answer has refused requests on both instances. */
function refusedOnBoth(answers: OnInstance[]): boolean {
  const refused = lastWindow(answers).filter((answer) => answer.status === 429);
  return refused.some((answer) => answer.on === "a") && refused.some((answer) => answer.on === "b");
}

/**
 * How long a websocket slot is leased, renewed every third of it by the instance holding it: an
 * instance stalled for more than two thirds of it (4 s) loses its slots, as a dead one does.
 */
const LEASE_MS = 6_000;
const REQUESTS_PER_WINDOW = 20;
const AUTH_FAILURES_PER_WINDOW = 6;
const LIMITS = {
  // Shared: 20 requests per window of 10 s, 6 failed authentications per window of 6 s (shared-buckets.ts).
  RATE_LIMIT_PER_SECOND: "2",
  RATE_LIMIT_BURST: String(REQUESTS_PER_WINDOW),
  AUTH_FAILURE_LIMIT_PER_SECOND: "1",
  AUTH_FAILURE_LIMIT_BURST: String(AUTH_FAILURES_PER_WINDOW),
  LIVE_MAX_CONNECTIONS_PER_KEY: "3",
  LIVE_CONNECTION_LEASE_MS: String(LEASE_MS),
};

describeBackend("postgres")("limits shared by two instances through one Redis", () => {
  const disposers = new Disposers();
  let redis: PrivateService;
  let reader: Redis;
  let a: Started;
  let b: Started;
  const sockets: WebSocket[] = [];
  const track = (socket: WebSocket) => void sockets.push(socket);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    reader = await redisReader(redis.url);
    disposers.add(async () => void (await reader.quit()));
    a = await startApp("postgres", disposers, { REDIS_URL: redis.url, ...LIMITS });
    b = await startApp("postgres", disposers, { REDIS_URL: redis.url, ...LIMITS, DATABASE_URL: a.env.DATABASE_URL! });
    disposers.add(() => sockets.forEach((socket) => socket.terminate()));
    await limitsCountedIn(a.url, "redis");
    await limitsCountedIn(b.url, "redis");
  });
  afterAll(() => disposers.disposeAll());

  it("gives one key one request budget across both instances", async () => {
    const { key, keyId } = await freshKeyWithId(a.app, "requests");
    const authorization = `Bearer ${key}`;
    // Until one window has refused requests on both instances: with a budget of its own, each instance
    // would have let 20 through in that window, 40 in all.
    const answers = await sendCounted(
      reader,
      requestsCounter(keyId),
      async (i) => {
        const on = i % 2 === 0 ? ("a" as const) : ("b" as const);
        return { ...(await listSubscriptions((on === "a" ? a : b).url, authorization)), on };
      },
      { enough: refusedOnBoth, max: 200 },
    );
    expect(refusedOnBoth(answers)).toBe(true);
    // Each request took the next place in the one window both count in: 200 up to 20, then 429.
    expectDecidedByWindows(answers, REQUESTS_PER_WINDOW, 200);
    expect(lastWindow(answers).filter((answer) => answer.status === 200)).toHaveLength(REQUESTS_PER_WINDOW);
    for (const answer of answers.filter((answer) => answer.status === 429)) {
      expect(answer).toMatchObject({ type: "application/problem+json; charset=utf-8", code: "RATE_LIMITED" });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Every decision came from Redis, none from an instance alone.
    expect(await metric(a.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBe(0);
    expect(await metric(b.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBe(0);
  });

  it("caps one key's websockets across both instances, and a closed socket gives its slot back", async () => {
    const { key, keyId } = await freshKeyWithId(a.app, "websockets");
    const opened: OpenedSocket[] = [];
    for (const on of [a, b, a, b, a]) opened.push(await openSocket(on.url, key, track));
    expect(opened.slice(0, 3).map((socket) => socket.outcome)).toEqual(["acked", "acked", "acked"]);
    // Each instance alone would have taken 3: these two were over the key's cap of 3 in all.
    for (const refused of opened.slice(3)) {
      expect(refused.outcome).toMatchObject({ code: 4429, reason: expect.stringMatching(AT_CAP) });
    }

    await closeSocket(opened[0]!); // held on A
    // A's close handler gives the slot back in Redis: then B can take it.
    await until(async () => (await reader.zcard(socketSlots(keyId))) === 2, { what: "A giving the slot back" });
    expect((await openSocket(b.url, key, track)).outcome).toBe("acked");
    expect((await openSocket(a.url, key, track)).outcome).toMatchObject({ code: 4429 });
  });

  it("gives one client address one budget of failed authentications across both instances", async () => {
    const unknown = "Bearer cgw_this-key-was-never-issued-by-anyone-0000";
    const from = "127.0.0.21"; // an address nothing else in this file uses: its window starts here
    const answers = await sendCounted(
      reader,
      authFailuresCounter(from),
      async (i) => {
        const on = i % 2 === 0 ? ("a" as const) : ("b" as const);
        return { ...(await listSubscriptions((on === "a" ? a : b).url, unknown, from)), on };
      },
      { enough: refusedOnBoth, max: 100 },
    );
    expect(refusedOnBoth(answers)).toBe(true);
    // Each instance alone would have looked up 6 unknown keys in that window: 12 in all.
    expectDecidedByWindows(answers, AUTH_FAILURES_PER_WINDOW, 401);
    expect(lastWindow(answers).filter((answer) => answer.status === 401)).toHaveLength(AUTH_FAILURES_PER_WINDOW);
    for (const answer of answers.filter((answer) => answer.status === 429)) {
      expect(answer).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  itInFullSuite(
    "frees the slots of an instance that died within its lease, and keeps a live instance's past it",
    async () => {
      const { key, keyId } = await freshKeyWithId(a.app, "instance that dies");
      let server: ServerProcess | undefined = await spawnServer({
        DATABASE_URL: a.env.DATABASE_URL!,
        REDIS_URL: redis.url,
        DELIVERY_WORKER: "false",
        // As the in-process instances (the harness's): instances on one database share them (DEPLOYMENT.md).
        ALLOW_PRIVATE_CALLBACKS: "true",
        GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: a.env.GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND!,
        ...LIMITS,
      });
      disposers.add(async () => {
        if (server) {
          server.child.kill("SIGKILL");
          await server.exited;
        }
      });
      await limitsCountedIn(server.url, "redis");
      for (let i = 0; i < 3; i++) expect((await openSocket(server.url, key, track)).outcome).toBe("acked");
      // Renewed while the process lives (every third of the lease): its slots outlast their first lease.
      const firstLeaseEnd = await lastLeaseEnd(keyId);
      await until(async () => (await redisNow()) > firstLeaseEnd, { what: "the slots' first lease over" });
      expect((await openSocket(a.url, key, track)).outcome).toMatchObject({ reason: expect.stringMatching(AT_CAP) });

      server.child.kill("SIGKILL"); // no close handler runs: only the lease frees its slots
      await server.exited;
      server = undefined;
      // Nothing renews them now: they end within a lease of now, and then the cap is free again.
      const leaseEnd = await lastLeaseEnd(keyId);
      expect(leaseEnd).toBeLessThanOrEqual((await redisNow()) + LEASE_MS);
      await until(async () => (await redisNow()) > leaseEnd, { what: "the dead instance's leases over" });
      expect((await openSocket(a.url, key, track)).outcome).toBe("acked");
    },
    120_000,
  );

  /** The latest lease end of the key's socket slots (scores, Redis's clock in ms). */
  async function lastLeaseEnd(keyId: string): Promise<number> {
    const [, score] = await reader.zrange(socketSlots(keyId), -1, -1, "WITHSCORES");
    return Number(score);
  }
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await reader.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  }
});
