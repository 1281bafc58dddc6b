import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { STATUS_CODE_PREFIX } from "../src/onerecord/events/status-codes";
import { logisticsEventsPage } from "../src/onerecord/sql/logistics-events-page.sql";
import { expirePending } from "../src/retention/sql/expire-pending.sql";
import {
  pruneCarrierStatuses,
  pruneDeadDeliveries,
  pruneDeliveredDeliveries,
  pruneEvents,
  pruneExpiredSubscriptions,
} from "../src/retention/sql/prune-batch.sql";
import {
  pruneAccessDelegations,
  pruneNotificationsReceived,
  pruneOneRecordSubscriptions,
  pruneProposals,
} from "../src/retention/sql/prune-onerecord.sql";
import { prunedThrough } from "../src/retention/sql/pruned-through.sql";
import { tableSizes } from "../src/retention/sql/table-sizes.sql";
import { vacuum } from "../src/db/sql/vacuum.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyOneRecordOutbox, oneRecordSubscription, queueOneRecordNotification } from "./support/onerecord-outbox";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

/** Each statement of retention/sql/ on its own, on both databases. */
describe.each(BACKENDS)("retention statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let fx: ReturnType<typeof fixtures>;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(() => emptyTables(db));

    const DAY = 86_400_000;
    const ago = (ms: number) => new Date(Date.now() - ms);
    const batch = (limit: number) => ({ before: ago(5 * DAY).toISOString(), limit });
    const exists = async (id: string) => (await db.prisma.delivery.findUnique({ where: { id } })) !== null;

    it.each([
      ["prune-delivered-deliveries", pruneDeliveredDeliveries, "DELIVERED", "DEAD"],
      ["prune-dead-deliveries", pruneDeadDeliveries, "DEAD", "DELIVERED"],
    ] as const)(
      "%s deletes a batch of deliveries of its status finished before the cutoff, their attempts with them",
      async (_, prune, status, other) => {
        const clientId = await fx.client();
        const subscriptionId = await fx.subscription(clientId);
        const old = [];
        for (let i = 0; i < 3; i++)
          old.push(await fx.delivery({ subscriptionId, clientId, status, completedAt: ago(10 * DAY) }));
        await db.prisma.deliveryAttempt.create({
          data: { deliveryId: old[0]!, startedAt: ago(10 * DAY), durationMs: 5, statusCode: 500 },
        });
        const recent = await fx.delivery({ subscriptionId, clientId, status, completedAt: ago(DAY) });
        const otherStatus = await fx.delivery({ subscriptionId, clientId, status: other, completedAt: ago(10 * DAY) });
        expect(await prune.affectedRows(db.prisma, batch(2))).toBe(2);
        expect(await prune.affectedRows(db.prisma, batch(2))).toBe(1);
        expect(await prune.affectedRows(db.prisma, batch(2))).toBe(0);
        for (const id of old) expect(await exists(id)).toBe(false);
        expect(await db.prisma.deliveryAttempt.count()).toBe(0);
        expect(await exists(recent)).toBe(true);
        expect(await exists(otherStatus)).toBe(true);
      },
    );

    it("prune-events deletes a batch of old events without deliveries and raises each AWB's pruned mark to the highest position deleted", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      for (let i = 0; i < 3; i++) await fx.event(a, ago(10 * DAY));
      const kept = await fx.event(a, ago(10 * DAY)); // position 4, still has a delivery
      await fx.event(a, ago(DAY)); // position 5, recent
      await fx.event(b, ago(10 * DAY));
      const clientId = await fx.client();
      await fx.delivery({ subscriptionId: null, clientId, eventId: kept, status: "DELIVERED" });
      await db.prisma.awbStreamPruned.create({ data: { awb: b, prunedThrough: 7 } });
      const pruned = async () =>
        Object.fromEntries(
          (await db.prisma.awbStreamPruned.findMany()).map((row) => [row.awb, Number(row.prunedThrough)]),
        );
      expect(await pruneEvents.rows(db.prisma, batch(100))).toEqual([{ n: 4 }]);
      expect(await pruned()).toEqual({ [a]: 3, [b]: 7 }); // b's mark is not lowered
      expect(
        (await db.prisma.statusEvent.findMany({ where: { awb: a } })).map((e) => Number(e.position)).sort(),
      ).toEqual([4, 5]);
      expect(await pruneEvents.rows(db.prisma, batch(100))).toEqual([{ n: 0 }]);
    });

    it("prune-events deletes the body a milestone was posted with through ONE Record with the milestone, and only it", async () => {
      const awb = fx.awb();
      const [old, recent] = [await fx.event(awb, ago(10 * DAY)), await fx.event(awb, ago(DAY))];
      const posted = (objectId: string, id: string) => ({
        objectId,
        id,
        eventCode: `${STATUS_CODE_PREFIX}DEP`,
        eventDate: ago(10 * DAY),
        creationDate: ago(10 * DAY),
        body: { "@type": "cargo:StatusUpdateEvent" },
        createdBy: "organization-carrier",
      });
      const otherEvent = randomUUID(); // an event posted to the Shipment that is no milestone
      await db.prisma.logisticsEvent.deleteMany();
      await db.prisma.logisticsEvent.createMany({
        data: [
          posted(`shipment-${awb}`, old),
          posted(`shipment-${awb}`, recent),
          posted(`shipment-${awb}`, otherEvent),
          posted("a-piece", old), // another object's event under the same id (ids are per object)
        ],
      });
      expect(await pruneEvents.rows(db.prisma, batch(100))).toEqual([{ n: 1 }]);
      const left = await db.prisma.logisticsEvent.findMany({ select: { objectId: true, id: true } });
      expect(left.map((row) => `${row.objectId} ${row.id}`).sort()).toEqual(
        [`shipment-${awb} ${recent}`, `shipment-${awb} ${otherEvent}`, `a-piece ${old}`].sort(),
      );
      // The Shipment lists what is left: the milestone still stored and the posted event, never the pruned milestone.
      const listed = await logisticsEventsPage.rows(db.prisma, {
        objectId: `shipment-${awb}`,
        awb,
        statusCodePrefix: STATUS_CODE_PREFIX,
        statusCodes: ["DEP"],
        codes: null,
        createdAfter: null,
        createdBefore: null,
        occurredAfter: null,
        occurredBefore: null,
        sort: "ASC-creationDate",
        limit: 10,
        skip: 0,
      });
      expect(listed.map((row) => `${row.kind} ${row.id}`).sort()).toEqual(
        [`milestone ${recent}`, `posted ${otherEvent}`].sort(),
      );
      await db.prisma.logisticsEvent.deleteMany();
    });

    it("prune-events takes at most limit events a batch", async () => {
      const a = fx.awb();
      for (let i = 0; i < 3; i++) await fx.event(a, ago(10 * DAY));
      expect(await pruneEvents.rows(db.prisma, batch(2))).toEqual([{ n: 2 }]);
      expect(await db.prisma.statusEvent.count()).toBe(1);
    });

    it("prune-carrier-statuses deletes a batch of statuses received before the cutoff", async () => {
      const status = (statusKey: string, receivedAt: Date) => ({
        statusKey,
        awb: "020-12345675",
        code: "FOH",
        mapped: false,
        format: "FSU",
        sourceText: "FOH",
        receivedAt,
        ordinal: 0,
      });
      await db.prisma.carrierStatus.createMany({
        data: [status("fsu:1", ago(10 * DAY)), status("fsu:2", ago(10 * DAY)), status("fsu:3", ago(DAY))],
      });
      expect(await pruneCarrierStatuses.affectedRows(db.prisma, batch(1))).toBe(1);
      expect(await pruneCarrierStatuses.affectedRows(db.prisma, batch(10))).toBe(1);
      expect((await db.prisma.carrierStatus.findMany()).map((row) => row.statusKey)).toEqual(["fsu:3"]);
    });

    it("prune-expired-subscriptions deletes a batch of subscriptions expired before the cutoff", async () => {
      const clientId = await fx.client();
      await fx.subscription(clientId, { expiresAt: ago(10 * DAY) });
      const lately = await fx.subscription(clientId, { expiresAt: ago(DAY) });
      const never = await fx.subscription(clientId);
      expect(await pruneExpiredSubscriptions.affectedRows(db.prisma, batch(10))).toBe(1);
      expect((await db.prisma.subscription.findMany()).map((row) => row.id).sort()).toEqual([lately, never].sort());
    });

    describe("ONE Record", () => {
      beforeEach(async () => {
        await emptyOneRecordOutbox(db);
        await db.sql.query("TRUNCATE onerecord_proposal, onerecord_partner, onerecord_notification_received", []);
      });
      const IDENTIFIER = "LOGISTICS_OBJECT_IDENTIFIER";
      const oneRecordIds = async () =>
        (await db.prisma.oneRecordSubscription.findMany({ select: { id: true } })).map((row) => row.id).sort();

      it("prune-onerecord-subscriptions deletes a batch of requests revoked, rejected or failed before the cutoff, or expired before it, that have no delivery left", async () => {
        /** A subscription in `status`, decided `decidedAgo` ms ago (null: never). */
        const ended = async (status: string, decidedAgo: number | null, expiresAt: Date | null = null) => {
          const id = await oneRecordSubscription(db, { status, expiresAt });
          await db.prisma.oneRecordSubscription.update({
            where: { id },
            data: { decidedAt: decidedAgo === null ? null : ago(decidedAgo), requestedAt: ago(20 * DAY) },
          });
          return id;
        };
        const gone = [
          await ended("REQUEST_REVOKED", 10 * DAY),
          await ended("REQUEST_REJECTED", 10 * DAY),
          await ended("REQUEST_FAILED", 10 * DAY),
          await ended("REQUEST_ACCEPTED", 20 * DAY, ago(10 * DAY)), // expired 10 days ago
        ];
        const kept = [
          await ended("REQUEST_REVOKED", DAY), // revoked lately
          await ended("REQUEST_ACCEPTED", 20 * DAY), // accepted long ago, never expires
          await ended("REQUEST_ACCEPTED", 20 * DAY, ago(DAY)), // expired lately
          await ended("REQUEST_ACCEPTED", 20 * DAY, new Date(Date.now() + DAY)),
        ];
        // Revoked long ago, each with a delivery left: a notification being sent (PENDING, leased), a
        // parked one, a dead one a client may still redeliver, a delivered one still in the log.
        const withDeliveries: Record<string, { subscriptionId: string; deliveryId: string }> = {};
        for (const status of ["PENDING", "PARKED", "DEAD", "DELIVERED"] as const) {
          const subscriptionId = await ended("REQUEST_REVOKED", 10 * DAY);
          const deliveryId = await queueOneRecordNotification(db, {
            subscriptionId,
            endpoint: "http://subscriber.test/onerecord/notifications",
          });
          await db.prisma.delivery.update({
            where: { id: deliveryId },
            data: {
              status,
              ...(status === "PENDING" ? { leaseUntil: new Date(Date.now() + 60_000), leaseToken: randomUUID() } : {}),
              completedAt: status === "DEAD" || status === "DELIVERED" ? ago(10 * DAY) : null,
            },
          });
          withDeliveries[status] = { subscriptionId, deliveryId };
        }
        const withDelivery = Object.values(withDeliveries).map((d) => d.subscriptionId);

        expect(await pruneOneRecordSubscriptions.affectedRows(db.prisma, batch(3))).toBe(3);
        expect(await pruneOneRecordSubscriptions.affectedRows(db.prisma, batch(3))).toBe(1);
        expect(await pruneOneRecordSubscriptions.affectedRows(db.prisma, batch(3))).toBe(0);
        expect(await oneRecordIds()).toEqual([...kept, ...withDelivery].sort());
        // Every delivery is still there, and still its subscription's.
        for (const { subscriptionId, deliveryId } of Object.values(withDeliveries))
          expect((await fx.deliveryRow(deliveryId)).oneRecordSubscriptionId).toBe(subscriptionId);
        expect((await oneRecordIds()).some((id) => gone.includes(id))).toBe(false);

        // Once its dead delivery has gone (by RETENTION_DEAD_DAYS), the subscription goes too.
        expect(await pruneDeadDeliveries.affectedRows(db.prisma, batch(10))).toBe(1);
        expect(await pruneOneRecordSubscriptions.affectedRows(db.prisma, batch(10))).toBe(1);
        expect(await oneRecordIds()).not.toContain(withDeliveries.DEAD!.subscriptionId);
        expect(await exists(withDeliveries.PENDING!.deliveryId)).toBe(true);
      });

      it("prune-onerecord-proposals deletes answered proposals made before the cutoff that are no longer wanted and left no subscription standing", async () => {
        const clientId = await fx.client();
        const partner = `organization-${clientId}`;
        await db.prisma.oneRecordPartner.create({
          data: { organization: partner, serverUrl: "http://partner.test/1r", clientId, proposeSubscriptions: true },
        });
        const proposal = async (
          of: string,
          awb: string,
          { status = "DONE", createdAt = ago(10 * DAY) }: { status?: string; createdAt?: Date } = {},
        ) =>
          (
            await db.prisma.oneRecordProposal.create({
              data: { partner: of, topicType: IDENTIFIER, topic: `shipment-${awb}`, status, createdAt },
            })
          ).id;
        /** A publisher-initiated subscription the partner's answer recorded for `awb`. */
        const published = async (awb: string, status = "REQUEST_ACCEPTED", expiresAt: Date | null = null) =>
          db.prisma.oneRecordSubscription.create({
            data: {
              status,
              initiatedBy: "PUBLISHER",
              requestedBy: partner,
              subscription: {},
              subscriber: partner,
              topicType: IDENTIFIER,
              topic: `shipment-${awb}`,
              awb,
              eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
              expiresAt,
              endpoint: "http://partner.test/1r/notifications",
              origin: "http://partner.test",
            },
          });
        const [followed, unfollowed, lapsed, standing, revoked, expired, young, pending] = Array.from(
          { length: 8 },
          () => fx.awb(),
        );
        await fx.subscription(clientId, { awb: followed });
        await fx.subscription(clientId, { awb: lapsed, expiresAt: ago(DAY) });
        await published(standing!);
        await published(revoked!, "REQUEST_REVOKED");
        await published(expired!, "REQUEST_ACCEPTED", ago(DAY));
        const kept = [
          await proposal(partner, followed!), // still followed the legacy way: never asked again
          await proposal(partner, standing!), // what it recorded stands
          await proposal(partner, young!, { createdAt: ago(DAY) }),
          await proposal(partner, pending!, { status: "PENDING" }), // still to be asked
        ];
        const gone = [
          await proposal(partner, unfollowed!), // the legacy subscription deleted
          await proposal(partner, lapsed!, { status: "FAILED" }), // … or expired
          await proposal(partner, revoked!),
          await proposal(partner, expired!),
          await proposal("organization-removed-partner", followed!), // the partner removed
        ];
        expect(await pruneProposals.affectedRows(db.prisma, batch(3))).toBe(3);
        expect(await pruneProposals.affectedRows(db.prisma, batch(3))).toBe(2);
        expect(await pruneProposals.affectedRows(db.prisma, batch(3))).toBe(0);
        const left = (await db.prisma.oneRecordProposal.findMany({ select: { id: true } })).map((row) => row.id);
        expect(left.sort()).toEqual(kept.sort());
        expect(gone.some((id) => left.includes(id))).toBe(false);
      });

      it("prune-onerecord-notifications-received deletes a batch of notifications received before the cutoff", async () => {
        const received = (notificationId: string, receivedAt: Date) => ({
          sender: "https://partner.test/logistics-objects/organization-1",
          notificationId,
          eventType: "LOGISTICS_EVENT_RECEIVED",
          body: {},
          receivedAt,
        });
        await db.prisma.oneRecordNotificationReceived.createMany({
          data: [received("a", ago(10 * DAY)), received("b", ago(10 * DAY)), received("c", ago(DAY))],
        });
        expect(await pruneNotificationsReceived.affectedRows(db.prisma, batch(1))).toBe(1);
        expect(await pruneNotificationsReceived.affectedRows(db.prisma, batch(10))).toBe(1);
        const left = await db.prisma.oneRecordNotificationReceived.findMany({ select: { notificationId: true } });
        expect(left.map((row) => row.notificationId)).toEqual(["c"]);
      });

      it("prune-onerecord-access-delegations deletes a batch of delegations revoked, rejected or failed before the cutoff, or expired before it, that hold no grant", async () => {
        await db.sql.query("DELETE FROM logistics_object_grant WHERE delegation_id IS NOT NULL", []);
        await db.sql.query("DELETE FROM onerecord_access_delegation", []);
        /** A delegation in `status`, decided `decidedAgo` ms ago (null: never), with a grant when asked. */
        const delegation = async (
          status: string,
          decidedAgo: number | null,
          expiresAt: Date | null = null,
          granted = false,
        ) => {
          const { id } = await db.prisma.oneRecordAccessDelegation.create({
            data: {
              status,
              requestedBy: "organization-x",
              requestedAt: ago(20 * DAY),
              decidedAt: decidedAgo === null ? null : ago(decidedAgo),
              delegation: {},
              objects: [`piece-${randomUUID()}`],
              organizations: ["organization-y"],
              permissions: ["GET_LOGISTICS_OBJECT"],
              expiresAt,
            },
          });
          if (granted)
            await db.prisma.logisticsObjectGrant.create({
              data: {
                objectId: `piece-${randomUUID()}`,
                organizationId: "organization-y",
                grantedBy: "organization-x",
                delegationId: id,
                expiresAt,
              },
            });
          return id;
        };
        const gone = [
          await delegation("REQUEST_REVOKED", 10 * DAY),
          await delegation("REQUEST_REJECTED", 10 * DAY),
          await delegation("REQUEST_FAILED", 10 * DAY),
          await delegation("REQUEST_ACCEPTED", 20 * DAY, ago(10 * DAY)), // expired 10 days ago, its grants gone
        ];
        const kept = [
          await delegation("REQUEST_REJECTED", DAY), // rejected lately
          await delegation("REQUEST_PENDING", null), // never decided
          await delegation("REQUEST_ACCEPTED", 20 * DAY, null, true), // standing
          await delegation("REQUEST_ACCEPTED", 20 * DAY, ago(DAY)), // expired lately
          await delegation("REQUEST_ACCEPTED", 20 * DAY, ago(10 * DAY), true), // expired long ago, its grant kept
        ];
        expect(await pruneAccessDelegations.affectedRows(db.prisma, batch(3))).toBe(3);
        expect(await pruneAccessDelegations.affectedRows(db.prisma, batch(3))).toBe(1);
        expect(await pruneAccessDelegations.affectedRows(db.prisma, batch(3))).toBe(0);
        const left = (await db.prisma.oneRecordAccessDelegation.findMany({ select: { id: true } })).map((r) => r.id);
        expect(left.sort()).toEqual(kept.sort());
        expect(gone.some((id) => left.includes(id))).toBe(false);
      });
    });

    it("expire-pending marks dead the unheld pending and parked deliveries of expired, long-disabled and deleted subscriptions", async () => {
      const clientId = await fx.client();
      const expired = await fx.subscription(clientId, { expiresAt: ago(1_000) });
      const longDisabled = await fx.subscription(clientId, { disabledAt: ago(10 * DAY) });
      const lately = await fx.subscription(clientId, { disabledAt: ago(DAY) });
      const live = await fx.subscription(clientId);
      const stale = randomUUID();
      const ofExpired = await fx.delivery({ subscriptionId: expired, clientId, leaseToken: stale, leaseUntil: ago(1) });
      const heldToken = randomUUID();
      const held = await fx.delivery({
        subscriptionId: expired,
        clientId,
        leaseToken: heldToken,
        leaseUntil: new Date(Date.now() + 60_000),
      });
      const parkedLong = await fx.delivery({ subscriptionId: longDisabled, clientId, status: "PARKED" });
      const parkedLately = await fx.delivery({ subscriptionId: lately, clientId, status: "PARKED" });
      const orphan = await fx.delivery({ subscriptionId: null, clientId, status: "PARKED" });
      const ofLive = await fx.delivery({ subscriptionId: live, clientId });
      const run = (disabledBefore: Date | null, limit = 10) =>
        expirePending.affectedRows(db.prisma, { limit, disabledBefore: disabledBefore?.toISOString() ?? null });

      expect(await run(null)).toBe(2); // the expired subscription's and the orphan
      expect(await fx.deliveryRow(ofExpired)).toMatchObject({
        status: "DEAD",
        lastError: "subscription expired before it was sent",
        leaseToken: null,
      });
      expect(await fx.deliveryRow(orphan)).toMatchObject({
        status: "DEAD",
        lastError: "subscription deleted while disabled",
      });
      expect(await run(ago(5 * DAY))).toBe(1);
      expect(await fx.deliveryRow(parkedLong)).toMatchObject({
        status: "DEAD",
        lastError: "subscription disabled for longer than RETENTION_DEAD_DAYS",
      });
      expect((await fx.deliveryRow(parkedLong)).completedAt).not.toBeNull();
      for (const [id, status] of [
        [held, "PENDING"],
        [parkedLately, "PARKED"],
        [ofLive, "PENDING"],
      ] as const)
        expect((await fx.deliveryRow(id)).status).toBe(status);
      expect((await fx.deliveryRow(held)).leaseToken).toBe(heldToken);
    });

    it("expire-pending takes at most limit deliveries of each kind a batch", async () => {
      const clientId = await fx.client();
      const expired = await fx.subscription(clientId, { expiresAt: ago(1_000) });
      for (let i = 0; i < 3; i++) await fx.delivery({ subscriptionId: expired, clientId });
      expect(await expirePending.affectedRows(db.prisma, { limit: 2, disabledBefore: null })).toBe(2);
      expect(await expirePending.affectedRows(db.prisma, { limit: 2, disabledBefore: null })).toBe(1);
    });

    it("vacuum refreshes the row estimates that table-sizes answers with each table's size", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      for (let i = 0; i < 3; i++) await fx.delivery({ subscriptionId, clientId });
      await vacuum(["delivery", "subscription"]).affectedRows(db.prisma, {});
      const sizes = await tableSizes.rows(db.prisma, { tables: ["delivery", "subscription", "no_such_table"] });
      const byTable = Object.fromEntries(sizes.map((row) => [row.table, row]));
      expect(Object.keys(byTable).sort()).toEqual(["delivery", "subscription"]);
      expect(Number(byTable.delivery!.rows)).toBe(3);
      expect(Number(byTable.subscription!.rows)).toBe(1);
      expect(Number(byTable.delivery!.bytes)).toBeGreaterThan(8_192);
      await expect(vacuum(["no_such_table"]).affectedRows(db.prisma, {})).rejects.toThrow(/no_such_table/);
    });

    it("pruned-through answers an AWB's pruned mark, no row without one", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      await db.prisma.awbStreamPruned.create({ data: { awb: a, prunedThrough: 42 } });
      expect((await prunedThrough.rows(db.prisma, { awb: a })).map((row) => Number(row.pruned_through))).toEqual([42]);
      expect(await prunedThrough.rows(db.prisma, { awb: b })).toEqual([]);
    });
  });
});
