import type { App } from "../src/app";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";

/**
 * Two instances on one PostgreSQL database pruning at the same moment: between them every aged row
 * is deleted once, none is left behind, both take part and neither run fails. (That they do not wait
 * on each other's locked rows — SKIP LOCKED — is not measured here: with plain FOR UPDATE this test
 * passes too.) PostgreSQL only: the embedded database is one process.
 */
describeBackend("postgres")("retention run by two instances at once, on PostgreSQL", () => {
  const disposers = new Disposers();
  let first: App;
  let second: App;
  let url: string;

  beforeAll(async () => {
    let env: Record<string, string>;
    // Small batches, so each run takes many and the two runs interleave.
    const settings = { RETENTION_INTERVAL_MS: "0", RETENTION_BATCH_SIZE: "25", DELIVERY_WORKER: "false" };
    ({ app: first, url, env } = await startApp("postgres", disposers, settings));
    ({ app: second } = await startApp("postgres", disposers, { ...settings, DATABASE_URL: env.DATABASE_URL! }));
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  it("deletes every aged row exactly once between them, and keeps the young ones", async () => {
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
    for (let call = 0; call < 4; call++) {
      const events = Array.from({ length: 250 }, (_, i) => ({
        awb: "020-90000003",
        state: "RCS",
        eventId: `race-${call}-${i}`,
      }));
      const answer = await fetch(`${url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers,
        body: JSON.stringify(events),
      });
      expect(answer.status).toBe(202);
    }
    // 900 of the 1,000 a year and a day old; 100 young.
    await first.database.prisma.$executeRawUnsafe(
      `UPDATE status_event SET received_at = now() - interval '366 days'
       WHERE id IN (SELECT id FROM status_event WHERE awb = '020-90000003' ORDER BY position LIMIT 900)`,
    );
    const [a, b] = await Promise.all([first.retention.runOnce(), second.retention.runOnce()]);
    expect((a.events ?? 0) + (b.events ?? 0)).toBe(900);
    // Both took part (each run deletes until a batch comes back short: both see full batches at first).
    expect(a.events).toBeGreaterThan(0);
    expect(b.events).toBeGreaterThan(0);
    expect(await first.database.prisma.statusEvent.count({ where: { awb: "020-90000003" } })).toBe(100);
  }, 60_000);
});
