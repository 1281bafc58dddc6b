import { randomUUID } from "node:crypto";
import { Client } from "pg";
import { insertWithinCap } from "../src/subscriptions/sql/insert-within-cap.sql";
import { describeBackend, Disposers, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { startReceiver } from "./support/receiver";

const AWB = "020-12345675";

/**
 * The per-client cap under the race it exists for: two creates at cap − 1 whose inserts overlap.
 * PostgreSQL only (the embedded database runs one statement at a time, so there is no overlap).
 * One create is held open in a transaction of the test's own, in the middle of the gateway's own
 * capped-insert script; the other comes through HTTP meanwhile. Without the client lock — or with it
 * taken inside the statement that counts — the second would count without the first's row and both
 * would be stored.
 */
describeBackend("postgres")("the subscription cap under concurrent creates on PostgreSQL", () => {
  const disposers = new Disposers();
  let app: Awaited<ReturnType<typeof startApp>>["app"];
  let databaseUrl: string;
  let base: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    let url: string;
    let env: Record<string, string>;
    ({ app, url, env } = await startApp("postgres", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    databaseUrl = env.DATABASE_URL!;
    base = `${url}/carrier/handling/shipment/subscribe`;
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  it("refuses the second of two overlapping creates at cap − 1 once the first commits", async () => {
    const cap = 2;
    const { clientId } = await app.services.clients.createClient({
      name: "overlapping creates",
      callbackPrefixes: ["*"],
      maxSubscriptions: cap,
    });
    const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
    const create = (callback: string) =>
      getJson(base, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ awb: AWB, callback, states: "*" }),
      });
    expect((await create(`${receiver.url}/ok/held/0`)).status).toBe(201); // cap − 1

    const holder = new Client({ connectionString: databaseUrl });
    const observer = new Client({ connectionString: databaseUrl }); // outside the held transaction
    await holder.connect();
    await observer.connect();
    try {
      // The first create: the gateway's script, in a transaction left open (its row not yet committed).
      await holder.query(
        `BEGIN; ${insertWithinCap.render({ id: randomUUID(), clientId, awb: AWB, callback: `${receiver.url}/ok/held/1`, states: ["*"], expiresAt: null, cap })}`,
      );
      // The second: its checks pass (the first's row is not visible yet), then its insert meets the lock.
      const second = create(`${receiver.url}/ok/held/2`);
      let settled = false;
      void second.finally(() => (settled = true));
      const waitingOnLock = async () => {
        const { rows } = await observer.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM pg_stat_activity
           WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        return rows[0]!.n > 0;
      };
      // Until it waits on the lock, or has answered (as it does at once without the lock).
      let waited = false;
      for (let i = 0; i < 600 && !settled && !waited; i++) {
        waited = await waitingOnLock();
        if (!waited) await new Promise((r) => setTimeout(r, 25));
      }
      await holder.query("COMMIT");

      expect(await second).toMatchObject({
        status: 409,
        body: { code: "SUBSCRIPTION_LIMIT_REACHED", limit: cap },
      });
      expect(waited).toBe(true); // its insert overlapped the first create, not merely followed it
      expect(await app.database.prisma.subscription.count({ where: { clientId } })).toBe(cap);
    } finally {
      await holder.query("ROLLBACK").catch(() => {});
      await holder.end();
      await observer.end();
    }
  });
});
