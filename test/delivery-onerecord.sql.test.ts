import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { claimDue } from "../src/delivery/sql/claim-due.sql";
import { enableOneRecordSubscription } from "../src/delivery/sql/enable-onerecord-subscription.sql";
import { parkPending } from "../src/delivery/sql/park-pending.sql";
import { recordOutcomes } from "../src/delivery/sql/record-outcomes.sql";
import { requeueDeadOneRecord, requeueDelivery } from "../src/delivery/sql/requeue.sql";
import { expirePending } from "../src/retention/sql/expire-pending.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import {
  emptyOneRecordOutbox,
  oneRecordSubscription,
  type OneRecordSubscriptionFields,
  queueOneRecordNotification,
} from "./support/onerecord-outbox";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

/**
 * The outbox's statements on ONE Record notifications (kind ONE_RECORD, onerecord_subscription_id),
 * on both databases: what is claimed, parked, recorded, requeued, enabled and expired.
 */
describe.each(BACKENDS)("the outbox's statements on ONE Record notifications on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let fx: ReturnType<typeof fixtures>;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(async () => {
      await emptyTables(db);
      await emptyOneRecordOutbox(db);
    });

    const HOUR = 3_600_000;
    const ago = (ms: number) => new Date(Date.now() - ms);
    let serial = 0;
    /** A subscription of its own origin, and one due notification for it. */
    const subscribed = async (fields: OneRecordSubscriptionFields = {}) => {
      const endpoint = `http://subscriber-${++serial}.test/onerecord/notifications`;
      const subscriptionId = await oneRecordSubscription(db, { endpoint, ...fields });
      const deliveryId = await queueOneRecordNotification(db, { subscriptionId, endpoint });
      return { subscriptionId, deliveryId, endpoint };
    };
    const claim = (leaseToken = randomUUID()) =>
      claimDue.rows(db.sql, {
        excludeOrigins: [],
        scanLimit: 50,
        perOrigin: 10,
        leaseMs: 30_000,
        limit: 50,
        leaseToken,
      });
    const subscriptionRow = (id: string) => db.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } });
    const failed = (id: string, token: string, disableAfterHours: number, status = "PENDING") => ({
      ids: [id],
      tokens: [token],
      statuses: [status],
      nextAttemptsAt: [status === "PENDING" ? new Date(Date.now() + 60_000).toISOString() : null],
      lastErrors: ["HTTP 503"],
      startedAt: [new Date().toISOString()],
      durationsMs: [5],
      statusCodes: [503],
      errors: ["HTTP 503"],
      disableAfterHours,
    });

    it("claim-due hands out an accepted subscription's notification, an expired one's queued while it was valid, and an announcement, with their kind, no client and the queuing time; never a revoked or not accepted one's; parks a disabled one's", async () => {
      const accepted = await subscribed();
      const announcement = await queueOneRecordNotification(db, {
        subscriptionId: null,
        endpoint: "http://partner.test/notifications",
      });
      const revoked = await subscribed({ status: "REQUEST_REVOKED" });
      const rejected = await subscribed({ status: "REQUEST_REJECTED" });
      const expired = await subscribed({ expiresAt: ago(1_000) });
      const disabled = await subscribed({ disabledAt: ago(1_000) });
      const token = randomUUID();
      const claimed = await claim(token);
      expect(claimed.map((row) => row.id).sort()).toEqual(
        [accepted.deliveryId, expired.deliveryId, announcement].sort(),
      );
      const row = claimed.find((r) => r.id === accepted.deliveryId)!;
      expect(row).toMatchObject({ kind: "ONE_RECORD", client_id: null, callback: accepted.endpoint, attempt_count: 0 });
      const queued = await fx.deliveryRow(accepted.deliveryId);
      expect(new Date(row.received_at).getTime()).toBe(queued.createdAt.getTime());
      expect(queued.leaseToken).toBe(token);
      for (const { deliveryId } of [revoked, rejected])
        expect(await fx.deliveryRow(deliveryId)).toMatchObject({ status: "PENDING", leaseToken: null });
      expect(await fx.deliveryRow(disabled.deliveryId)).toMatchObject({ status: "PARKED", leaseToken: null });
      expect(await claim()).toEqual([]);
    });

    it("record-outcomes runs a ONE Record subscription's failing clock: a failure starts it, one overdue disables the subscription (reported with its kind and endpoint), a success clears it", async () => {
      const fresh = await subscribed();
      const overdue = await subscribed({ failingSince: ago(3 * HOUR) });
      const [t1, t2] = [randomUUID(), randomUUID()];
      await claim(t1); // both, under one token
      const [first] = await recordOutcomes.rows(db.sql, failed(fresh.deliveryId, t1, 2));
      expect(first).toEqual({ n: 1, disabled: [] });
      expect((await subscriptionRow(fresh.subscriptionId)).failingSince).not.toBeNull();

      const [second] = await recordOutcomes.rows(db.sql, failed(overdue.deliveryId, t1, 2));
      expect(second!.n).toBe(1);
      expect(second!.disabled).toEqual([
        {
          kind: "ONE_RECORD",
          id: overdue.subscriptionId,
          clientId: null,
          callback: overdue.endpoint,
          reason: expect.stringMatching(/^every delivery attempt failed since \d{4}-/),
        },
      ]);
      expect((await subscriptionRow(overdue.subscriptionId)).disabledAt).not.toBeNull();
      // A legacy subscription's clock is not touched by it.
      expect(await db.prisma.subscription.count({ where: { failingSince: { not: null } } })).toBe(0);

      const again = await queueOneRecordNotification(db, {
        subscriptionId: fresh.subscriptionId,
        endpoint: fresh.endpoint,
      });
      await claim(t2);
      const [third] = await recordOutcomes.rows(db.sql, {
        ...failed(again, t2, 2, "DELIVERED"),
        nextAttemptsAt: [null],
        lastErrors: [null],
        statusCodes: [204],
        errors: [null],
      });
      expect(third).toEqual({ n: 1, disabled: [] });
      expect((await subscriptionRow(fresh.subscriptionId)).failingSince).toBeNull();
    });

    it("park-pending parks a disabled ONE Record subscription's pending notifications that no live lease holds", async () => {
      const disabled = await subscribed({ disabledAt: ago(1_000) });
      const held = await queueOneRecordNotification(db, {
        subscriptionId: disabled.subscriptionId,
        endpoint: disabled.endpoint,
      });
      await db.prisma.delivery.update({
        where: { id: held },
        data: { leaseToken: randomUUID(), leaseUntil: new Date(Date.now() + 60_000) },
      });
      const enabled = await subscribed();
      expect(
        await parkPending.rows(db.sql, {
          subscriptionIds: [],
          oneRecordSubscriptionIds: [disabled.subscriptionId, enabled.subscriptionId],
        }),
      ).toEqual([{ n: 1 }]);
      expect(await fx.deliveryRow(disabled.deliveryId)).toMatchObject({ status: "PARKED" });
      expect(await fx.deliveryRow(held)).toMatchObject({ status: "PENDING" });
      expect(await fx.deliveryRow(enabled.deliveryId)).toMatchObject({ status: "PENDING" });
    });

    it("requeue-delivery and requeue-dead-onerecord requeue dead notifications (parked while disabled), never one of a revoked subscription", async () => {
      const live = await subscribed();
      const disabled = await subscribed({ disabledAt: ago(1_000) });
      const revoked = await subscribed({ status: "REQUEST_REVOKED" });
      const older = await queueOneRecordNotification(db, {
        subscriptionId: live.subscriptionId,
        endpoint: live.endpoint,
      });
      const leaseToken = randomUUID();
      await db.prisma.delivery.updateMany({ data: { status: "DEAD", completedAt: new Date(), leaseToken } });
      await db.prisma.delivery.update({ where: { id: older }, data: { createdAt: ago(HOUR) } });

      expect(await requeueDelivery.affectedRows(db.prisma, { id: disabled.deliveryId })).toBe(1);
      expect(await fx.deliveryRow(disabled.deliveryId)).toMatchObject({ status: "PARKED", leaseToken: null });
      expect(await requeueDelivery.affectedRows(db.prisma, { id: revoked.deliveryId })).toBe(0);
      expect(await fx.deliveryRow(revoked.deliveryId)).toMatchObject({ status: "DEAD" });

      const window = { subscriptionId: live.subscriptionId, from: ago(HOUR / 2).toISOString(), to: null };
      expect(await requeueDeadOneRecord.affectedRows(db.prisma, window)).toBe(1);
      expect(await fx.deliveryRow(live.deliveryId)).toMatchObject({
        status: "PENDING",
        attemptCount: 0,
        leaseToken: null,
      });
      expect(await fx.deliveryRow(older)).toMatchObject({ status: "DEAD" });
      expect(
        await requeueDeadOneRecord.affectedRows(db.prisma, {
          subscriptionId: revoked.subscriptionId,
          from: null,
          to: null,
        }),
      ).toBe(0);
    });

    it("enable-onerecord-subscription clears the disable and the failing clock, makes its parked notifications due, and says whether it was disabled", async () => {
      const disabled = await subscribed({ disabledAt: ago(1_000), failingSince: ago(HOUR) });
      await db.prisma.oneRecordSubscription.update({
        where: { id: disabled.subscriptionId },
        data: { disabledReason: "every delivery attempt failed since …" },
      });
      await claim(); // parks it
      expect(await fx.deliveryRow(disabled.deliveryId)).toMatchObject({ status: "PARKED" });
      const [, updated] = await enableOneRecordSubscription.run(db.sql, { id: disabled.subscriptionId });
      expect(updated).toEqual([{ was_disabled: true, status: "REQUEST_ACCEPTED" }]);
      expect(await subscriptionRow(disabled.subscriptionId)).toMatchObject({
        disabledAt: null,
        disabledReason: null,
        failingSince: null,
      });
      expect(await fx.deliveryRow(disabled.deliveryId)).toMatchObject({ status: "PENDING" });
      expect((await claim()).map((row) => row.id)).toEqual([disabled.deliveryId]);
      const [, again] = await enableOneRecordSubscription.run(db.sql, { id: disabled.subscriptionId });
      expect(again).toEqual([{ was_disabled: false, status: "REQUEST_ACCEPTED" }]);
    });

    it("expire-pending marks dead the unsent notifications of revoked and long-disabled ONE Record subscriptions, with the reason; leaves accepted and expired ones', announcements and leased ones", async () => {
      const revoked = await subscribed({ status: "REQUEST_REVOKED" });
      const expired = await subscribed({ expiresAt: ago(1_000) });
      const longDisabled = await subscribed({ disabledAt: ago(48 * HOUR) });
      const recentlyDisabled = await subscribed({ disabledAt: ago(1_000) });
      await claim(); // parks both disabled ones' notifications
      const accepted = await subscribed();
      const announcement = await queueOneRecordNotification(db, {
        subscriptionId: null,
        endpoint: "http://partner.test/notifications",
      });
      const leasedRevoked = await queueOneRecordNotification(db, {
        subscriptionId: revoked.subscriptionId,
        endpoint: revoked.endpoint,
      });
      await db.prisma.delivery.update({
        where: { id: leasedRevoked },
        data: { leaseToken: randomUUID(), leaseUntil: new Date(Date.now() + 60_000) },
      });
      const count = await expirePending.affectedRows(db.prisma, {
        limit: 100,
        disabledBefore: ago(24 * HOUR).toISOString(),
      });
      expect(count).toBe(2);
      expect(await fx.deliveryRow(revoked.deliveryId)).toMatchObject({
        status: "DEAD",
        lastError: "subscription revoked",
      });
      expect(await fx.deliveryRow(longDisabled.deliveryId)).toMatchObject({
        status: "DEAD",
        lastError: "subscription disabled for longer than RETENTION_DEAD_DAYS",
      });
      expect(await fx.deliveryRow(recentlyDisabled.deliveryId)).toMatchObject({ status: "PARKED" });
      for (const id of [accepted.deliveryId, expired.deliveryId, announcement, leasedRevoked])
        expect(await fx.deliveryRow(id)).toMatchObject({ status: "PENDING" });
    });
  });
});
