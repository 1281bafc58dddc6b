import { Client } from "pg";
import type { App } from "../src/app";
import { param, sql, statement } from "../src/db/sql-statement";
import { createDeliveryStore, type AttemptOutcome, type ClaimedDelivery } from "../src/delivery/delivery.store";
import { SUBSCRIPTION_DISABLED } from "../src/delivery/sql/subscription-disabled";
import type { StatusCode } from "../src/domain/status";
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, graphql, postJson } from "./support/http";
import { until } from "./support/webhooks";

/**
 * Parking: a disabled subscription's pending notifications are PARKED — every one
 * of them, one whose lease ran out and one an ingestion racing the disable committed included — and
 * its owner reads them, and redelivers, with that state shown (this answered 500 when parking was a
 * due time of 'infinity'). Enabling the subscription makes them due at once. The worker is off: the
 * test is the only claimant, and disables through the store's own outcome recording.
 */
describe.each(BACKENDS)("parked deliveries on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let env: Record<string, string>;
    let store: ReturnType<typeof createDeliveryStore>;
    let serial = 3_100_000;
    const SHIPMENT = "/carrier/handling/shipment";
    const auth = { authorization: `Bearer ${ADMIN_KEY}` };

    beforeAll(async () => {
      ({ app, url, env } = await startApp(backend, disposers, { DELIVERY_WORKER: "false" }));
      store = createDeliveryStore(app.database.sql);
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const nextAwb = () => {
      const s = String(++serial);
      return `020-${s}${Number(s) % 7}`;
    };
    const milestone = (awb: string, state: StatusCode) => ({
      eventId: null,
      awb,
      state,
      occurredAt: new Date(),
      toaTimestamp: null,
      station: null,
      flight: null,
    });

    /** A subscription of the admin's client with one pending delivery per state given; their ids, oldest first. */
    async function subscriptionWith(states: StatusCode[]): Promise<{ subscriptionId: string; deliveryIds: string[] }> {
      const client = await app.database.prisma.client.findFirstOrThrow();
      const awb = nextAwb();
      const { id } = await app.database.prisma.subscription.create({
        data: { clientId: client.id, awb, callback: "http://127.0.0.1:9/cb", states: ["*"] },
      });
      for (const state of states) await app.services.milestones.ingest([milestone(awb, state)]);
      const rows = await app.database.prisma.delivery.findMany({
        where: { subscriptionId: id },
        orderBy: { createdAt: "asc" },
      });
      return { subscriptionId: id, deliveryIds: rows.map((r) => r.id) };
    }
    /** Claims `id` alone (the rest claimed with it are given back). */
    const claim = async (id: string, leaseMs = 30_000): Promise<ClaimedDelivery> => {
      const claimed = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs });
      await store.release(claimed.filter((c) => c.id !== id));
      const mine = claimed.find((c) => c.id === id);
      if (!mine) throw new Error(`delivery ${id} was not claimed`);
      return mine;
    };
    const failed = (c: ClaimedDelivery, status: AttemptOutcome["status"] = "PENDING"): AttemptOutcome => ({
      deliveryId: c.id,
      leaseToken: c.leaseToken,
      startedAt: new Date(),
      durationMs: 3,
      statusCode: 500,
      error: "HTTP 500",
      status,
      nextAttemptAt: status === "PENDING" ? new Date(Date.now() + 60_000) : null,
    });
    /** Records a failed attempt of `c` after two hours of failures: the subscription is disabled by it. */
    async function disableThrough(c: ClaimedDelivery, subscriptionId: string): Promise<void> {
      await app.database.prisma.$executeRawUnsafe(
        `UPDATE subscription SET failing_since = now() - interval '2 hours' WHERE id = $1::uuid`,
        subscriptionId,
      );
      const disabled: string[] = [];
      expect(
        await store.recordOutcomes([failed(c)], {
          disableAfterHours: 1,
          onDisabled: (subscriptions) => disabled.push(...subscriptions.map((s) => s.id)),
        }),
      ).toBe(1);
      expect(disabled).toEqual([subscriptionId]);
    }
    const row = (id: string) => app.database.prisma.delivery.findUniqueOrThrow({ where: { id } });

    it("after an auto-disable, the owner's deliveries read (REST and GraphQL) and redeliver answer 200 with the parked state; enabling makes them due", async () => {
      const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN", "DEP"]);
      const [first, second, third] = deliveryIds as [string, string, string];
      // The third is dead before the disable (a 410, say).
      expect(await store.recordOutcomes([failed(await claim(third), "DEAD")])).toBe(1);
      await disableThrough(await claim(first), subscriptionId);

      const listed = await getJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/deliveries`, { headers: auth });
      expect(listed.status).toBe(200);
      const byId = new Map((listed.body as Array<{ deliveryId: string }>).map((d) => [d.deliveryId, d]));
      // The retry just recorded and the untried one alike; a parked delivery has no due time.
      expect(byId.get(first)).toMatchObject({ status: "PARKED", nextAttemptAt: null, attemptCount: 1 });
      expect(byId.get(second)).toMatchObject({ status: "PARKED", nextAttemptAt: null, attemptCount: 0 });
      expect(byId.get(third)).toMatchObject({ status: "DEAD" });

      const onlyParked = await getJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/deliveries?status=PARKED`, {
        headers: auth,
      });
      expect(onlyParked.status).toBe(200);
      expect((onlyParked.body as Array<{ deliveryId: string }>).map((d) => d.deliveryId).sort()).toEqual(
        [first, second].sort(),
      );

      const viaGraphql = await graphql(
        url,
        `
          query ($id: ID!) {
            deliveries(subscriptionId: $id) {
              deliveryId
              status
              nextAttemptAt
            }
          }
        `,
        { id: subscriptionId },
        auth,
      );
      expect(viaGraphql.errors).toBeUndefined();
      expect(viaGraphql.data.deliveries).toEqual(
        expect.arrayContaining([
          { deliveryId: first, status: "PARKED", nextAttemptAt: null },
          { deliveryId: second, status: "PARKED", nextAttemptAt: null },
        ]),
      );

      // Redelivering a parked one changes nothing; a dead one is requeued parked (sent once enabled).
      const again = await postJson(`${url}${SHIPMENT}/deliveries/${second}/redeliver`, {}, auth);
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ deliveryId: second, status: "PARKED", attemptCount: 0 });
      const revived = await graphql(
        url,
        `
          mutation ($id: ID!) {
            redeliver(deliveryId: $id) {
              deliveryId
              status
              nextAttemptAt
            }
          }
        `,
        { id: third },
        auth,
      );
      expect(revived.errors).toBeUndefined();
      expect(revived.data.redeliver).toEqual({ deliveryId: third, status: "PARKED", nextAttemptAt: null });

      // Nothing of it is claimed while it is disabled.
      const claimed = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
      await store.release(claimed);
      expect(claimed.filter((c) => deliveryIds.includes(c.id))).toEqual([]);

      const enabled = await postJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/enable`, {}, auth);
      expect(enabled.status).toBe(200);
      const after = await getJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/deliveries`, { headers: auth });
      for (const d of after.body as Array<{ status: string; nextAttemptAt: string | null }>) {
        expect(d.status).toBe("PENDING");
        expect(Date.parse(d.nextAttemptAt!)).toBeLessThanOrEqual(Date.now());
      }
      const resumed = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
      await store.release(resumed);
      expect(resumed.map((c) => c.id)).toEqual(expect.arrayContaining(deliveryIds));
    });

    it("parks every pending delivery of the subscription on disable, one whose lease ran out included, and fences its stale holder out", async () => {
      const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN"]);
      const [first, stalled] = deliveryIds as [string, string];
      const stale = await claim(stalled);
      await app.database.prisma.$executeRawUnsafe(
        `UPDATE delivery SET lease_until = now() - interval '1 second' WHERE id = $1::uuid`,
        stalled,
      );
      await disableThrough(await claim(first), subscriptionId);

      const parked = await row(stalled);
      expect(parked.status).toBe("PARKED");
      expect(parked.leaseToken).toBeNull();
      // The stalled holder's late outcome changes nothing.
      expect(await store.recordOutcomes([failed(stale)])).toBe(0);
      expect((await row(stalled)).status).toBe("PARKED");
      expect((await row(stalled)).attemptCount).toBe(0);
    });

    it("parks a disabled subscription's delivery that a claim finds due (an outcome recorded after the disable), instead of skipping it at every claim", async () => {
      const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN"]);
      const [first, inFlight] = deliveryIds as [string, string];
      const held = await claim(inFlight); // a send under way when the subscription is disabled
      await disableThrough(await claim(first), subscriptionId);
      expect((await row(inFlight)).status).toBe("PENDING"); // its lease is live: left to its holder
      // Its holder records a retry, due now.
      expect(await store.recordOutcomes([{ ...failed(held), nextAttemptAt: new Date(Date.now() - 1_000) }])).toBe(1);
      const claimed = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
      await store.release(claimed);
      expect(claimed.map((c) => c.id)).not.toContain(inFlight);
      expect((await row(inFlight)).status).toBe("PARKED");
    });

    it("marks dead, at retention's next run, the parked deliveries of a disabled subscription its owner deleted (nothing will enable them)", async () => {
      const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN"]);
      await disableThrough(await claim(deliveryIds[0]!), subscriptionId);
      const deleted = await fetch(`${url}${SHIPMENT}/subscribe/${subscriptionId}`, { method: "DELETE", headers: auth });
      expect(deleted.status).toBeLessThan(300);
      for (const id of deliveryIds) expect((await row(id)).status).toBe("PARKED");
      await app.retention.runOnce();
      for (const id of deliveryIds)
        expect(await row(id)).toMatchObject({ status: "DEAD", lastError: "subscription deleted while disabled" });
    });

    /** A second connection to the database (PostgreSQL), and whether any session of it waits on a lock. */
    async function secondConnection(): Promise<{ other: Client; someoneWaits: () => Promise<boolean> }> {
      const other = new Client({ connectionString: env.DATABASE_URL });
      await other.connect();
      disposers.add(() => other.end());
      const someoneWaits = async () =>
        (
          await other.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          )
        ).rows[0]!.n > 0;
      return { other, someoneWaits };
    }

    (backend === "postgres" ? it : it.skip)(
      "an enable waits for a statement parking a delivery of the subscription, then makes what it parked due (PostgreSQL)",
      async () => {
        const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN"]);
        const [first, late] = deliveryIds as [string, string];
        const held = await claim(late);
        await disableThrough(await claim(first), subscriptionId);
        expect(await store.recordOutcomes([{ ...failed(held), nextAttemptAt: new Date(Date.now() - 1_000) }])).toBe(1);
        // A parking statement under way, as a claim parks: under a key-share lock on the subscription.
        const { other: parker, someoneWaits } = await secondConnection();
        await parker.query("BEGIN");
        const parkOne = statement<{ id: string }>(
          "test/park-one",
          sql`UPDATE delivery d SET status = 'PARKED' WHERE d.id = ${param("id")}::uuid AND ${SUBSCRIPTION_DISABLED}`,
        );
        await parker.query(parkOne.text, parkOne.values({ id: late }));
        const enabling = postJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/enable`, {}, auth);
        await until(someoneWaits, { what: "the enable waiting for the parking statement" });
        await parker.query("COMMIT");
        expect((await enabling).status).toBe(200);
        expect((await row(late)).status).toBe("PENDING");
        expect((await row(first)).status).toBe("PENDING");
      },
      60_000,
    );

    (backend === "postgres" ? it : it.skip)(
      "a claim that meets a subscription being enabled waits for it, then leaves the delivery due instead of parking it (PostgreSQL)",
      async () => {
        const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS", "MAN"]);
        const [first, late] = deliveryIds as [string, string];
        const held = await claim(late);
        await disableThrough(await claim(first), subscriptionId);
        expect(await store.recordOutcomes([{ ...failed(held), nextAttemptAt: new Date(Date.now() - 1_000) }])).toBe(1);
        // An enable under way, as subscription.store.ts runs it: the row locked FOR UPDATE, then enabled.
        const { other: enabler, someoneWaits } = await secondConnection();
        await enabler.query("BEGIN");
        await enabler.query(`SELECT 1 FROM subscription WHERE id = $1::uuid FOR UPDATE`, [subscriptionId]);
        await enabler.query(`UPDATE subscription SET disabled_at = NULL, disabled_reason = NULL WHERE id = $1::uuid`, [
          subscriptionId,
        ]);
        const claiming = store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
        await until(someoneWaits, { what: "the claim waiting for the enable" });
        await enabler.query("COMMIT");
        await store.release(await claiming);
        // Not parked under the enabled subscription: due, and the next claim takes it.
        expect((await row(late)).status).toBe("PENDING");
        const next = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
        await store.release(next);
        expect(next.map((c) => c.id)).toContain(late);
      },
      60_000,
    );

    (backend === "postgres" ? it : it.skip)(
      "parks what an ingestion racing the disable commits after it (PostgreSQL: two connections)",
      async () => {
        const { subscriptionId, deliveryIds } = await subscriptionWith(["RCS"]);
        const subscription = await app.database.prisma.subscription.findUniqueOrThrow({
          where: { id: subscriptionId },
        });
        // A second connection holds an advisory lock that the ingestion's `alongside` step (run in its
        // transaction right after its deliveries are queued) waits for: the delivery is queued, not committed.
        const { other: blocker, someoneWaits } = await secondConnection();
        const lockKey = 7_262_026 + serial;
        await blocker.query("SELECT pg_advisory_lock($1)", [lockKey]);
        const ingestion = app.services.milestones.ingest(
          [milestone(subscription.awb, "MAN")],
          new Date(),
          [],
          "broker",
          async (tx) => {
            await tx.$queryRawUnsafe("SELECT 1 AS held FROM (SELECT pg_advisory_xact_lock($1::bigint)) l", lockKey);
          },
        );
        await until(someoneWaits, { what: "the ingestion waiting with its delivery queued" });

        // Disabled while the ingestion's delivery is queued but not committed.
        await disableThrough(await claim(deliveryIds[0]!), subscriptionId);
        await blocker.query("SELECT pg_advisory_unlock($1)", [lockKey]);
        const [result] = await ingestion;
        expect(result!.matchedSubscriptions).toBe(1);
        const raced = await app.database.prisma.delivery.findFirstOrThrow({
          where: { subscriptionId, id: { notIn: deliveryIds } },
        });

        // The next claim parks it rather than leaving it due for every later claim to scan past.
        const claimed = await store.claimDue({ limit: 500, perOrigin: 500, excludeOrigins: [], leaseMs: 30_000 });
        await store.release(claimed);
        expect(claimed.map((c) => c.id)).not.toContain(raced.id);
        expect((await row(raced.id)).status).toBe("PARKED");

        // Enabling brings it back with the rest.
        expect((await postJson(`${url}${SHIPMENT}/subscribe/${subscriptionId}/enable`, {}, auth)).status).toBe(200);
        expect((await row(raced.id)).status).toBe("PENDING");
      },
      60_000,
    );
  });
});
