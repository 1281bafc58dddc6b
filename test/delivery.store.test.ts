import type { App } from "../src/app";
import { createDeliveryStore, type AttemptOutcome, type ClaimedDelivery } from "../src/delivery/delivery.store";
import { createRetentionStore } from "../src/retention/retention.store";
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { graphql, postJson } from "./support/http";

/**
 * The outbox's SQL on its own, two claimants on one row: after a lease runs out and another claim
 * takes the delivery, the first holder's writes must change nothing.
 */
describe.each(BACKENDS)("the outbox store on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let store: ReturnType<typeof createDeliveryStore>;
    let serial = 7_000_000;
    beforeAll(async () => {
      // No worker: the test is the only claimant.
      ({ app, url } = await startApp(backend, disposers, { DELIVERY_WORKER: "false" }));
      store = createDeliveryStore(app.database.sql);
    });
    afterAll(() => disposers.disposeAll());

    /** One pending delivery, due now. */
    async function pendingDelivery(): Promise<string> {
      const client = await app.database.prisma.client.findFirstOrThrow();
      const s = String(++serial);
      const awb = `020-${s}${Number(s) % 7}`;
      const subscription = await app.database.prisma.subscription.create({
        data: { clientId: client.id, awb, callback: "http://127.0.0.1:9/cb", states: ["*"] },
      });
      await app.services.milestones.ingest([
        { eventId: null, awb, state: "DEP", occurredAt: new Date(), toaTimestamp: null, station: null, flight: null },
      ]);
      const delivery = await app.database.prisma.delivery.findFirstOrThrow({
        where: { subscriptionId: subscription.id },
      });
      return delivery.id;
    }
    const claimOnly = async (id: string, leaseMs: number): Promise<ClaimedDelivery> => {
      const claimed = await store.claimDue({ limit: 100, perOrigin: 100, excludeOrigins: [], leaseMs });
      const mine = claimed.find((c) => c.id === id);
      if (!mine) throw new Error(`delivery ${id} was not claimed`);
      // Leave every other delivery as it was.
      await store.release(claimed.filter((c) => c.id !== id));
      return mine;
    };
    const outcome = (claim: ClaimedDelivery, status: AttemptOutcome["status"], statusCode: number): AttemptOutcome => ({
      deliveryId: claim.id,
      leaseToken: claim.leaseToken,
      startedAt: new Date(),
      durationMs: 5,
      statusCode,
      error: statusCode >= 300 ? `HTTP ${statusCode}` : null,
      status,
      nextAttemptAt: status === "PENDING" ? new Date(Date.now() + 60_000) : null,
    });
    const expireLeases = (id: string) =>
      app.database.prisma.$executeRawUnsafe(
        `UPDATE delivery SET lease_until = now() - interval '1 second' WHERE id = $1::uuid`,
        id,
      );
    const row = (id: string) =>
      app.database.prisma.delivery.findUniqueOrThrow({ where: { id }, include: { attempts: true } });

    it("a holder whose lease was taken over cannot overwrite the new holder's outcome or count an attempt twice", async () => {
      const id = await pendingDelivery();
      const first = await claimOnly(id, 30_000);
      await expireLeases(id); // the first holder stalled past its lease
      const second = await claimOnly(id, 30_000);
      expect(second.leaseToken).not.toBe(first.leaseToken);

      expect(await store.recordOutcomes([outcome(second, "DELIVERED", 204)])).toBe(1);
      // The stale holder's late outcome (a failure that would schedule a retry) changes nothing.
      expect(await store.recordOutcomes([outcome(first, "PENDING", 503)])).toBe(0);
      const after = await row(id);
      expect(after.status).toBe("DELIVERED");
      expect(after.attemptCount).toBe(1);
      expect(after.attempts.map((a) => a.statusCode)).toEqual([204]);
    });

    it("a stale holder's give-back does not clear the new holder's lease", async () => {
      const id = await pendingDelivery();
      const first = await claimOnly(id, 30_000);
      await expireLeases(id);
      const second = await claimOnly(id, 30_000);
      expect(await store.release([first])).toBe(0);
      const held = await row(id);
      expect(held.leaseToken).toBe(second.leaseToken);
      expect(held.leaseUntil!.getTime()).toBeGreaterThan(Date.now());
      // …so no third claim can take it while the second holder sends.
      const third = await store.claimDue({ limit: 100, perOrigin: 100, excludeOrigins: [], leaseMs: 30_000 });
      expect(third.map((c) => c.id)).not.toContain(id);
      await store.release(third);
      expect(await store.release([second])).toBe(1);
    });

    it("a stale outcome arriving after the new holder finished is dropped whole, attempt row included", async () => {
      const id = await pendingDelivery();
      const first = await claimOnly(id, 30_000);
      await expireLeases(id);
      const second = await claimOnly(id, 30_000);
      expect(await store.recordOutcomes([outcome(second, "PENDING", 500)])).toBe(1);
      expect(await store.recordOutcomes([outcome(first, "DELIVERED", 204)])).toBe(0);
      const after = await row(id);
      expect(after.status).toBe("PENDING");
      expect(after.attemptCount).toBe(1);
      expect(after.attempts).toHaveLength(1);
      expect(after.leaseToken).toBeNull();
    });

    describe("a delivery handed back is fenced against the holder it was taken from", () => {
      const auth = { authorization: `Bearer ${ADMIN_KEY}` };
      /**
       * A holder claims the delivery (its token), stalls past its lease, and meanwhile the delivery's
       * subscription expires and retention's expiry pass marks it dead: handed back, not sent.
       */
      async function expiredUnderAStalledHolder(): Promise<{ id: string; stale: ClaimedDelivery }> {
        const id = await pendingDelivery();
        const stale = await claimOnly(id, 30_000);
        await expireLeases(id);
        await app.database.prisma.$executeRawUnsafe(
          `UPDATE subscription SET expires_at = now() - interval '1 second'
           WHERE id = (SELECT subscription_id FROM delivery WHERE id = $1::uuid)`,
          id,
        );
        const expired = createRetentionStore(app.database.prisma);
        while ((await expired.expirePendingBatch(100, null)) > 0);
        expect((await row(id)).status).toBe("DEAD");
        return { id, stale };
      }

      it("by retention's expiry pass: the stalled holder's outcome changes nothing", async () => {
        const { id, stale } = await expiredUnderAStalledHolder();
        expect(await store.recordOutcomes([outcome(stale, "DELIVERED", 204)])).toBe(0);
        const after = await row(id);
        expect(after.status).toBe("DEAD");
        expect(after.attemptCount).toBe(0);
        expect(after.attempts).toHaveLength(0);
        expect(after.leaseToken).toBeNull();
      });

      it("by redeliver (REST and GraphQL): the holder from before it was dead is fenced out", async () => {
        const ways = {
          rest: async (id: string) =>
            (await postJson(`${url}/carrier/handling/shipment/deliveries/${id}/redeliver`, {}, auth)).body,
          graphql: async (id: string) =>
            (
              await graphql(
                url,
                `
                  mutation ($id: ID!) {
                    redeliver(deliveryId: $id) {
                      status
                    }
                  }
                `,
                { id },
                auth,
              )
            ).data?.redeliver,
        };
        for (const redeliver of Object.values(ways)) {
          const { id, stale } = await expiredUnderAStalledHolder();
          expect(await redeliver(id)).toMatchObject({ status: "PENDING" });
          expect(await store.recordOutcomes([outcome(stale, "DEAD", 410)])).toBe(0);
          const after = await row(id);
          expect(after.status).toBe("PENDING");
          expect(after.attemptCount).toBe(0);
          expect(after.leaseToken).toBeNull();
        }
      });

      it("by redeliverDead: the holder from before it was dead is fenced out", async () => {
        const { id, stale } = await expiredUnderAStalledHolder();
        const { subscriptionId } = await app.database.prisma.delivery.findUniqueOrThrow({ where: { id } });
        const answer = await postJson(
          `${url}/carrier/handling/shipment/subscribe/${subscriptionId}/redeliver`,
          {},
          auth,
        );
        expect(answer.body).toEqual({ requeued: 1 });
        expect(await store.recordOutcomes([outcome(stale, "DELIVERED", 204)])).toBe(0);
        const after = await row(id);
        expect(after.status).toBe("PENDING");
        expect(after.attemptCount).toBe(0);
        expect(after.leaseToken).toBeNull();
      });
    });
  });
});
