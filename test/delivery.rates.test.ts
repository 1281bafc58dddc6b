import { describeBackend } from "./support/harness";
import { awbFor, type Cleanups, ingestBurst, setupDeliveryServers, subscribeAll } from "./support/delivery-processes";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/**
 * Delivery rates over real processes on a real PostgreSQL. It compares rates measured in this run, so
 * it runs with no other test beside it (scripts/test.js, the serial phase: test/shards/plan.cjs SERIAL).
 */
describeBackend("postgres")("delivery rates (real processes, PostgreSQL)", () => {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    while (cleanups.length > 0) await cleanups.pop()!();
  });
  const setup = (env: Record<string, string> = {}) => setupDeliveryServers(cleanups, env);

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
    // (head-of-line blocking), it does not shave 10% off it. A loaded machine, paying for the circuit
    // breaker's and auto-disable's bookkeeping, keeps about 0.8; 0.6 still sits well clear of a collapse.
    expect(beside).toBeGreaterThanOrEqual(0.6 * bestAlone);
  }, 120_000);
});
