import { describeBackend } from "./support/harness";
import { awbFor, type Cleanups, ingestBurst, setupDeliveryServers, subscribeAll } from "./support/delivery-processes";
import type { ServerProcess } from "./support/process";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/**
 * Faults over real processes on a real PostgreSQL: the server is killed, the receiver goes away,
 * two servers share the outbox. Nothing accepted may be lost. (A receiver that never answers, and
 * what it does to the rate of the others: delivery.rates.test.ts, which runs with no other test beside it.)
 */
describeBackend("postgres")("delivery under faults (real processes, PostgreSQL)", () => {
  const cleanups: Cleanups = [];
  const setup = (env: Record<string, string> = {}) => setupDeliveryServers(cleanups, env);
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });

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
