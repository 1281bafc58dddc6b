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
import {
  type Answer,
  AT_CAP,
  closeSocket,
  freshKey,
  limitsCountedIn,
  listSubscriptions,
  openSocket,
  type OpenedSocket,
} from "./support/shared-limits";
import { metric } from "./support/ws-protocol";
import { itInFullSuite } from "./support/suite";

type Started = Awaited<ReturnType<typeof startApp>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const LEASE_MS = 1_500;
const LIMITS = {
  // Shared, 20 requests per window of 10 s (shared-buckets.ts), so no window ends within a test.
  RATE_LIMIT_PER_SECOND: "2",
  RATE_LIMIT_BURST: "20",
  AUTH_FAILURE_LIMIT_PER_SECOND: "1",
  AUTH_FAILURE_LIMIT_BURST: "6",
  LIVE_MAX_CONNECTIONS_PER_KEY: "3",
  LIVE_CONNECTION_LEASE_MS: String(LEASE_MS),
};

describeBackend("postgres")("limits shared by two instances through one Redis", () => {
  const disposers = new Disposers();
  let redis: PrivateService;
  let a: Started;
  let b: Started;
  const sockets: WebSocket[] = [];
  const track = (socket: WebSocket) => void sockets.push(socket);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    a = await startApp("postgres", disposers, { REDIS_URL: redis.url, ...LIMITS });
    b = await startApp("postgres", disposers, { REDIS_URL: redis.url, ...LIMITS, DATABASE_URL: a.env.DATABASE_URL! });
    disposers.add(() => sockets.forEach((socket) => socket.terminate()));
    await limitsCountedIn(a.url, "redis");
    await limitsCountedIn(b.url, "redis");
  });
  afterAll(() => disposers.disposeAll());

  it("gives one key one request budget across both instances", async () => {
    const key = `Bearer ${await freshKey(a.app, "requests")}`;
    const answers: Array<Answer & { on: "a" | "b" }> = [];
    for (let i = 0; i < 50; i++) {
      const on = i % 2 === 0 ? "a" : "b";
      answers.push({ ...(await listSubscriptions((on === "a" ? a : b).url, key)), on });
    }
    const ok = answers.filter((answer) => answer.status === 200);
    const limited = answers.filter((answer) => answer.status === 429);
    // Each instance alone would have let 20 through: 40 in all.
    expect(ok).toHaveLength(20);
    expect(limited).toHaveLength(30);
    expect(answers.slice(0, 20).every((answer) => answer.status === 200)).toBe(true);
    for (const answer of limited) {
      expect(answer).toMatchObject({ type: "application/problem+json; charset=utf-8", code: "RATE_LIMITED" });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Both refused: B refused requests it had never counted itself.
    expect(new Set(limited.map((answer) => answer.on))).toEqual(new Set(["a", "b"]));
    // Every decision came from Redis, none from an instance alone.
    expect(await metric(a.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBe(0);
    expect(await metric(b.url, 'gateway_rate_limit_fallbacks_total{limit="requests"}')).toBe(0);
  });

  it("caps one key's websockets across both instances, and a closed socket gives its slot back", async () => {
    const key = await freshKey(a.app, "websockets");
    const opened: OpenedSocket[] = [];
    for (const on of [a, b, a, b, a]) opened.push(await openSocket(on.url, key, track));
    expect(opened.slice(0, 3).map((socket) => socket.outcome)).toEqual(["acked", "acked", "acked"]);
    // Each instance alone would have taken 3: these two were over the key's cap of 3 in all.
    for (const refused of opened.slice(3)) {
      expect(refused.outcome).toMatchObject({ code: 4429, reason: expect.stringMatching(AT_CAP) });
    }

    await closeSocket(opened[0]!); // held on A
    // A's close handler gives the slot back in Redis: B can take it.
    let next: OpenedSocket | undefined;
    for (let attempt = 0; attempt < 5 && next?.outcome !== "acked"; attempt++) {
      if (attempt > 0) await sleep(200);
      next = await openSocket(b.url, key, track);
    }
    expect(next?.outcome).toBe("acked");
    expect((await openSocket(a.url, key, track)).outcome).toMatchObject({ code: 4429 });
  });

  it("gives one client address one budget of failed authentications across both instances", async () => {
    const unknown = "Bearer cgw_this-key-was-never-issued-by-anyone-0000";
    const from = "127.0.0.21"; // an address nothing else in this file uses: its window starts here
    const answers: Answer[] = [];
    for (let i = 0; i < 18; i++) answers.push(await listSubscriptions((i % 2 === 0 ? a : b).url, unknown, from));
    // Each instance alone would have looked up 6 unknown keys: 12 in all.
    expect(answers.filter((answer) => answer.status === 401)).toHaveLength(6);
    expect(answers.slice(0, 6).every((answer) => answer.status === 401)).toBe(true);
    for (const answer of answers.slice(6)) {
      expect(answer).toMatchObject({ status: 429, code: "RATE_LIMITED" });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
  });

  itInFullSuite(
    "frees the slots of an instance that died within its lease, and keeps a live instance's past it",
    async () => {
      const key = await freshKey(a.app, "instance that dies");
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
      // Renewed while the process lives: its slots outlast their lease.
      await sleep(2 * LEASE_MS);
      expect((await openSocket(a.url, key, track)).outcome).toMatchObject({ reason: expect.stringMatching(AT_CAP) });

      server.child.kill("SIGKILL"); // no close handler runs: only the lease frees its slots
      await server.exited;
      server = undefined;
      let next: OpenedSocket | undefined;
      for (let attempt = 0; attempt < 10 && next?.outcome !== "acked"; attempt++) {
        await sleep(LEASE_MS / 3);
        next = await openSocket(a.url, key, track);
        if (next.outcome !== "acked") expect(next.outcome).toMatchObject({ reason: expect.stringMatching(AT_CAP) });
      }
      expect(next?.outcome).toBe("acked");
    },
  );
});
