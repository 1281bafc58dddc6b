import { Client } from "pg";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

const AWB = "020-12345675";

/**
 * An ingestion meets a subscription deleted while it runs: it read the subscription (a plain read
 * takes no lock), the delete commits, then its delivery insert's foreign-key check finds the row
 * gone (SQLSTATE 23503). PostgreSQL only (the embedded database runs one statement at a time). The
 * delete is held open in a transaction of the test's own, so the ingestion's insert waits on it, and
 * committed once the ingestion is seen waiting. Without the retry the caller got a 500 for a valid
 * event (and a broker message went to the dead-letter queue).
 */
describeBackend("postgres")("ingestion while a matching subscription is deleted, on PostgreSQL", () => {
  const disposers = new Disposers();
  let url: string;
  let databaseUrl: string;

  beforeAll(async () => {
    let env: Record<string, string>;
    ({ url, env } = await startApp("postgres", disposers));
    databaseUrl = env.DATABASE_URL!;
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  it("stores the event and notifies nobody once the delete has committed, instead of failing", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const headers = { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" };
    const created = await fetch(`${url}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers,
      body: JSON.stringify({ awb: AWB, callback: `${receiver.url}/ok/deleted`, states: "*" }),
    });
    expect(created.status).toBe(201);
    const { subscriptionId } = (await created.json()) as { subscriptionId: string };

    const deleter = new Client({ connectionString: databaseUrl });
    const observer = new Client({ connectionString: databaseUrl });
    await deleter.connect();
    await observer.connect();
    try {
      await deleter.query("BEGIN");
      await deleter.query(`DELETE FROM subscription WHERE id = $1::uuid`, [subscriptionId]);
      const ingestion = fetch(`${url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers,
        body: JSON.stringify({ awb: AWB, state: "DEP", eventId: "race-deleted-subscription" }),
      });
      // The ingestion's delivery insert waits for the deleting transaction's row lock.
      await until(
        async () =>
          (
            await observer.query(
              `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO delivery%'`,
            )
          ).rowCount! > 0,
        { what: "the ingestion waiting on the deleted subscription's row" },
      );
      await deleter.query("COMMIT");
      const answer = await ingestion;
      expect(answer.status).toBe(202);
      const { events } = (await answer.json()) as {
        events: Array<{ duplicate: boolean; matchedSubscriptions: number }>;
      };
      expect(events).toEqual([expect.objectContaining({ duplicate: false, matchedSubscriptions: 0 })]);
      const [row] = (
        await observer.query<{ n: string }>(`SELECT count(*) AS n FROM delivery WHERE subscription_id = $1::uuid`, [
          subscriptionId,
        ])
      ).rows;
      expect(Number(row!.n)).toBe(0);
    } finally {
      await deleter.end();
      await observer.end();
    }
  }, 60_000);
});
