import { Client } from "pg";
import { STATUS_CODES } from "../src/domain/status";
import { describeBackend } from "./support/harness";
import { postJson } from "./support/http";
import { createPostgresDatabase } from "./support/postgres";
import { spawnServer, type ServerProcess } from "./support/process";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/**
 * Faults over real processes on a real PostgreSQL: the server is killed, the receiver goes away,
 * a receiver never answers, two servers share the outbox. Nothing accepted may be lost.
 */
const KEY = "cgw_fault-test-admin-key-00000001";
const auth = { authorization: `Bearer ${KEY}` };

function awbFor(i: number): string {
  const serial = String(2_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
}

describeBackend("postgres")("delivery under faults (real processes, PostgreSQL)", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

  async function setup(env: Record<string, string> = {}) {
    const database = await createPostgresDatabase();
    cleanups.push(database.drop);
    const sql = new Client({ connectionString: database.url });
    await sql.connect();
    cleanups.push(() => sql.end());
    const serverEnv = {
      DATABASE_URL: database.url,
      BOOTSTRAP_API_KEY: KEY,
      ALLOW_PRIVATE_CALLBACKS: "true",
      RATE_LIMIT_PER_SECOND: "0",
      DELIVERY_POLL_MS: "100",
      LOG_LEVEL: "info",
      ...env,
    };
    const servers: ServerProcess[] = [];
    const start = async (extra: Record<string, string> = {}) => {
      const server = await spawnServer({ ...serverEnv, ...extra });
      servers.push(server);
      return server;
    };
    cleanups.push(async () => {
      for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGKILL");
      await Promise.all(servers.map((s) => s.exited));
    });
    return { sql, start };
  }

  async function subscribeAll(url: string, callbackBase: string, awbs: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const awb of awbs) {
      const res = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${callbackBase}/${awb}`, states: "*" },
        auth,
      );
      expect(res.status).toBe(201);
      ids.push(res.body.subscriptionId);
    }
    return ids;
  }

  /** `count` events over `awbs`, each with its own eventId, ingested in batches of 500. */
  async function ingestBurst(url: string, awbs: string[], count: number, tag: string): Promise<void> {
    for (let start = 0; start < count; start += 500) {
      const batch = Array.from({ length: Math.min(500, count - start) }, (_, k) => {
        const i = start + k;
        return { eventId: `${tag}-${i}`, awb: awbs[i % awbs.length]!, state: STATUS_CODES[i % STATUS_CODES.length]! };
      });
      const res = await postJson(`${url}/carrier/handling/shipment/events`, batch, auth);
      expect(res.status).toBe(202);
      expect(res.body.events.every((e: { matchedSubscriptions: number }) => e.matchedSubscriptions === 1)).toBe(true);
    }
  }

  it("loses nothing when the server is SIGKILLed mid-burst: every event reaches its callback after a restart", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { sql, start } = await setup({ DELIVERY_LEASE_MS: "15000" });
    const first = await start();
    const awbs = Array.from({ length: 10 }, (_, i) => awbFor(i));
    await subscribeAll(first.url, `${receiver.url}/ok`, awbs);

    await ingestBurst(first.url, awbs, 5_000, "burst");
    await until(() => receiver.posts.length >= 300, { what: "deliveries in flight" });
    first.child.kill("SIGKILL");
    expect(await first.exited).toBe("SIGKILL");
    const atKill = receiver.posts.length;

    await start(); // the restart, on the same database
    const distinct = () => new Set(receiver.posts.map((p) => p.headers["webhook-id"])).size;
    await until(() => distinct() === 5_000, { timeoutMs: 90_000, what: "all 5,000 notifications" });

    const { rows: deliveries } = await sql.query<{ id: string; status: string; event_id: string; payload: string }>(
      "SELECT id::text, status::text, event_id::text, payload FROM delivery",
    );
    const {
      rows: [events],
    } = await sql.query<{ n: string }>("SELECT count(*) AS n FROM status_event");
    expect(Number(events!.n)).toBe(5_000);
    expect(deliveries).toHaveLength(5_000);
    expect(new Set(deliveries.map((d) => d.event_id)).size).toBe(5_000);
    await until(async () => (await sql.query("SELECT 1 FROM delivery WHERE status <> 'DELIVERED'")).rowCount === 0, {
      what: "every delivery recorded as delivered",
    });

    // Every webhook-id received is a delivery; a duplicate (sent before the kill, recorded after) carries the same id and body.
    const payloadById = new Map(deliveries.map((d) => [d.id, d.payload]));
    const unmatched = receiver.posts.filter(
      (post) => payloadById.get(String(post.headers["webhook-id"])) !== post.body,
    );
    expect(unmatched.map((post) => `${String(post.headers["webhook-id"])} ${post.body}`)).toEqual([]);
    const duplicates = receiver.posts.length - 5_000;
    console.log(
      `SIGKILL fault: ${atKill} notifications received before the kill; 5000/5000 delivered after restart; ${duplicates} duplicates, each with its original webhook-id`,
    );
  }, 180_000);

  it("catches a receiver up when it comes back after being down", async () => {
    const receiver = await startReceiver();
    const port = Number(new URL(receiver.url).port);
    // Retries and catch-up alone: with the circuit breaker on, the attempts would stop after ten
    // failures until its probe (test/failing-receivers.test.ts drives that path).
    const { sql, start } = await setup({
      DELIVERY_RETRY_SCHEDULE: "300ms,600ms,1s,2s,4s,8s",
      DELIVERY_CIRCUIT_FAILURES: "0",
    });
    const server = await start();
    const awbs = Array.from({ length: 5 }, (_, i) => awbFor(100 + i));
    await subscribeAll(server.url, `${receiver.url}/ok`, awbs);
    await receiver.close();

    await ingestBurst(server.url, awbs, 200, "down");
    await until(async () => (await sql.query("SELECT 1 FROM delivery WHERE attempt_count >= 2")).rowCount === 200, {
      what: "failed attempts while the receiver is down",
    });
    const { rows: errors } = await sql.query<{ error: string }>("SELECT DISTINCT error FROM delivery_attempt");
    expect(errors.map((e) => e.error)).toEqual(["ECONNREFUSED"]);

    const back = await startReceiver(port);
    cleanups.push(() => back.close());
    await until(() => new Set(back.posts.map((p) => p.headers["webhook-id"])).size === 200, {
      timeoutMs: 30_000,
      what: "the backlog",
    });
    await until(async () => (await sql.query("SELECT 1 FROM delivery WHERE status = 'DELIVERED'")).rowCount === 200, {
      what: "all recorded delivered",
    });
  }, 60_000);

  it("keeps the delivery rate to a healthy receiver when another receiver never answers", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    // Another origin (its own port): concurrency is bounded per origin.
    const silent = await startReceiver();
    cleanups.push(() => silent.close());
    const { sql, start } = await setup({ DELIVERY_POLL_MS: "20" });
    const server = await start();
    const healthy = Array.from({ length: 4 }, (_, i) => awbFor(200 + i));
    const stuck = Array.from({ length: 4 }, (_, i) => awbFor(300 + i));
    await subscribeAll(server.url, `${receiver.url}/ok/fine`, healthy);
    await subscribeAll(server.url, `${silent.url}/ok/hang`, stuck);
    const healthyCount = () => receiver.posts.filter((p) => p.path.startsWith("/ok/fine")).length;

    const measure = async (tag: string, withStuck: boolean) => {
      const before = healthyCount();
      if (withStuck) await ingestBurst(server.url, stuck, 1_000, `${tag}-stuck`);
      const started = performance.now();
      await ingestBurst(server.url, healthy, 3_000, tag);
      await until(() => healthyCount() - before >= 3_000, { timeoutMs: 60_000, what: `${tag} deliveries` });
      return 3_000 / ((performance.now() - started) / 1000);
    };
    await measure("warm-up", false);
    // Interleaved, best of two each: on two shared cores one measurement varies by ±10%.
    const alone = await measure("alone-1", false);
    const beside1 = await measure("beside-1", true);
    const alone2 = await measure("alone-2", false);
    const beside2 = await measure("beside-2", true);
    const bestAlone = Math.max(alone, alone2);
    const beside = Math.max(beside1, beside2);
    const {
      rows: [inFlight],
    } = await sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM delivery WHERE callback LIKE '%/ok/hang/%' AND status = 'PENDING'",
    );
    console.log(
      `slow-receiver fault: healthy rate ${bestAlone.toFixed(0)}/s alone, ${beside.toFixed(0)}/s beside 1,000–2,000 stuck deliveries (${(beside / bestAlone).toFixed(2)}x, best of two each); ${inFlight!.n} stuck still pending`,
    );
    expect(Number(inFlight!.n)).toBeGreaterThan(900);
    // What this guards against — a silent origin holding the shared send slots — collapses the rate
    // (head-of-line blocking), it does not shave 10% off it. Seen: 1.00–1.21 alone on this machine,
    // 0.80 and 0.82 inside full CI runs (since the circuit breaker and the auto-disable bookkeeping
    // came in, session 6); 0.6 still sits well clear of a collapse.
    expect(beside).toBeGreaterThanOrEqual(0.6 * bestAlone);
  }, 120_000);

  it("sends each delivery exactly once when two server processes share the outbox", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const { sql, start } = await setup({ DELIVERY_POLL_MS: "20" });
    const one = await start();
    const two = await start();
    const awbs = Array.from({ length: 20 }, (_, i) => awbFor(400 + i));
    await subscribeAll(one.url, `${receiver.url}/ok`, awbs);
    await ingestBurst(one.url, awbs.slice(0, 10), 1_000, "two-a");
    await ingestBurst(two.url, awbs.slice(10), 1_000, "two-b");
    await until(async () => (await sql.query("SELECT 1 FROM delivery WHERE status = 'DELIVERED'")).rowCount === 2_000, {
      timeoutMs: 60_000,
      what: "2,000 deliveries",
    });

    const perId = new Map<string, number>();
    for (const post of receiver.posts)
      perId.set(String(post.headers["webhook-id"]), (perId.get(String(post.headers["webhook-id"])) ?? 0) + 1);
    expect(perId.size).toBe(2_000);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
    const attempts = async (s: ServerProcess) =>
      Number(/gateway_delivery_attempts_total (\d+)/.exec(await (await fetch(`${s.url}/metrics`)).text())![1]);
    const [a, b] = [await attempts(one), await attempts(two)];
    console.log(`two workers: ${a} + ${b} attempts for 2000 deliveries, 0 sent twice`);
    expect(a + b).toBe(2_000);
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
  }, 120_000);
});
