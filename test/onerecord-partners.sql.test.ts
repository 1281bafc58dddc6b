import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { createDeliveryStore } from "../src/delivery/delivery.store";
import { originOf } from "../src/delivery/notification";
import { createPartnerAdmin, type PartnerAdmin } from "../src/onerecord/partners/partner-admin";
import { heldEndpointOf } from "../src/onerecord/partners/notification-endpoint";
import { movePartnerNotifications } from "../src/onerecord/sql/partner-move.sql";
import { releaseHeldNotifications } from "../src/onerecord/sql/partner-release-held.sql";
import { removePartner } from "../src/onerecord/sql/partner-remove.sql";
import { expirePending } from "../src/retention/sql/expire-pending.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyOneRecordOutbox, queueOneRecordNotification } from "./support/onerecord-outbox";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

const OLD = "http://old.partner.test/1r";
const NEW = "http://new.partner.test/one-record";

/**
 * A partner moving (partner:add with another server) or leaving (partner:remove), on both databases:
 * what is queued for it follows it to its new server, or ends with it; another partner's is untouched.
 */
describe.each(BACKENDS)("ONE Record partner statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let make: ReturnType<typeof fixtures>;
    let admin: PartnerAdmin;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      make = fixtures(db);
      admin = createPartnerAdmin(db.prisma, undefined);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(async () => {
      await emptyTables(db);
      await emptyOneRecordOutbox(db);
      await db.sql.query("TRUNCATE onerecord_partner", []);
    });

    /** A partner (an API client) registered on `server`. */
    const registered = async (server = OLD) => {
      const clientId = await make.client();
      await admin.add({ serverUrl: server, clientId });
      return { clientId, organization: `organization-${clientId}` };
    };
    /** A subscription of `subscriber` notifying `endpoint`, as POST /subscriptions stores it. */
    const subscription = async (subscriber: string, endpoint: string, status = "REQUEST_ACCEPTED") =>
      (
        await db.prisma.oneRecordSubscription.create({
          data: {
            status,
            initiatedBy: "SUBSCRIBER",
            requestedBy: subscriber,
            subscription: { "@type": "https://onerecord.iata.org/ns/api#Subscription" },
            subscriber,
            topicType: "LOGISTICS_OBJECT_IDENTIFIER",
            topic: `shipment-${make.awb()}`,
            eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
            endpoint,
            origin: originOf(endpoint),
          },
        })
      ).id;
    /** A notification queued to `endpoint`, then put in `status` (a PENDING one leased, as one being sent). */
    const queued = async (subscriptionId: string | null, endpoint: string, status = "PENDING") => {
      const id = await queueOneRecordNotification(db, { subscriptionId, endpoint, registered: false });
      await db.prisma.delivery.update({
        where: { id },
        data: {
          status: status as "PENDING",
          ...(status === "PENDING" ? { leaseUntil: new Date(Date.now() + 60_000), leaseToken: randomUUID() } : {}),
          ...(status === "DELIVERED" || status === "DEAD" ? { completedAt: new Date() } : {}),
        },
      });
      return id;
    };
    const delivery = (id: string) => db.prisma.delivery.findUniqueOrThrow({ where: { id } });
    const subscriptionRow = (id: string) => db.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } });

    describe("onerecord/partner-release-held (partner:add for an Organization whose notifications were held)", () => {
      it("queues notifications to a held endpoint parked, never claimed; registering its server points its subscriptions there and makes them due, nobody else's", async () => {
        const organization = `company-${randomUUID()}`;
        const held = heldEndpointOf(organization);
        const other = heldEndpointOf(`company-${randomUUID()}`);
        const live = await subscription(organization, held);
        const heldId = await queueOneRecordNotification(db, {
          subscriptionId: live,
          endpoint: held,
          registered: false,
        });
        const statusOnly = await queueOneRecordNotification(db, {
          subscriptionId: null,
          endpoint: held,
          registered: false,
        });
        const othersId = await queueOneRecordNotification(db, {
          subscriptionId: null,
          endpoint: other,
          registered: false,
        });
        for (const id of [heldId, statusOnly, othersId])
          expect(await delivery(id)).toMatchObject({ status: "PARKED", attemptCount: 0 });
        expect(
          await createDeliveryStore(db.sql).claimDue({
            limit: 100,
            perOrigin: 100,
            excludeOrigins: [],
            leaseMs: 60_000,
          }),
        ).toEqual([]);

        const newEndpoint = `${NEW}/notifications`;
        const [counts] = await releaseHeldNotifications.rows(db.prisma, {
          organization,
          heldEndpoint: held,
          newEndpoint,
          newOrigin: originOf(newEndpoint),
        });
        expect(counts).toMatchObject({ subscriptions: 1, deliveries: 2 });
        expect(await subscriptionRow(live)).toMatchObject({ endpoint: newEndpoint, origin: originOf(newEndpoint) });
        for (const id of [heldId, statusOnly])
          expect(await delivery(id)).toMatchObject({ status: "PENDING", callback: newEndpoint, lastError: null });
        expect(await delivery(othersId)).toMatchObject({ status: "PARKED", callback: other });
      });
    });

    describe("retention/expire-pending of held notifications", () => {
      it("ends a held notification only once held since before RETENTION_DEAD_DAYS' cutoff, saying why", async () => {
        const held = heldEndpointOf(`company-${randomUUID()}`);
        const id = await queueOneRecordNotification(db, { subscriptionId: null, endpoint: held, registered: false });
        const expire = (disabledBefore: Date | null) =>
          expirePending.affectedRows(db.prisma, {
            limit: 100,
            disabledBefore: disabledBefore === null ? null : disabledBefore.toISOString(),
          });
        await expire(null);
        await expire(new Date(Date.now() - 60_000));
        expect(await delivery(id)).toMatchObject({ status: "PARKED" });
        await expire(new Date(Date.now() + 60_000));
        expect(await delivery(id)).toMatchObject({
          status: "DEAD",
          lastError: expect.stringContaining("no server was registered for its Organization"),
        });
      });
    });

    describe("onerecord/partner-move (partner:add with another server)", () => {
      it("moves the partner's live subscriptions, their queued notifications and those queued under no subscription to the new server; nothing else", async () => {
        const { organization } = await registered();
        const oldEndpoint = `${OLD}/notifications`;
        const live = await subscription(organization, oldEndpoint);
        const pending = await queued(live, oldEndpoint);
        const parked = await queued(live, oldEndpoint, "PARKED");
        const delivered = await queued(live, oldEndpoint, "DELIVERED");
        const revoked = await subscription(organization, oldEndpoint, "REQUEST_REVOKED");
        const statusNotification = await queued(null, oldEndpoint, "PARKED");
        const elsewhere = await queued(null, "http://other.test/notifications");
        const stranger = await registered("http://stranger.test");
        const theirs = await subscription(stranger.organization, "http://stranger.test/notifications");
        const theirDelivery = await queued(theirs, "http://stranger.test/notifications");

        await admin.add({ serverUrl: `${NEW}/`, clientId: organization.slice("organization-".length) });

        const newEndpoint = `${NEW}/notifications`;
        const moved = { callback: newEndpoint, origin: "http://new.partner.test" };
        expect(await subscriptionRow(live)).toEqual(
          expect.objectContaining({ endpoint: newEndpoint, origin: moved.origin }),
        );
        expect(await delivery(pending)).toEqual(expect.objectContaining({ ...moved, status: "PENDING" }));
        expect(await delivery(parked)).toEqual(expect.objectContaining({ ...moved, status: "PARKED" }));
        expect(await delivery(statusNotification)).toEqual(expect.objectContaining({ ...moved, status: "PARKED" }));
        // What was sent stays as it was sent; a revoked subscription notifies no one any more.
        expect(await delivery(delivered)).toEqual(expect.objectContaining({ callback: oldEndpoint }));
        expect(await subscriptionRow(revoked)).toEqual(expect.objectContaining({ endpoint: oldEndpoint }));
        expect(await delivery(elsewhere)).toEqual(
          expect.objectContaining({ callback: "http://other.test/notifications" }),
        );
        expect(await subscriptionRow(theirs)).toEqual(
          expect.objectContaining({ endpoint: "http://stranger.test/notifications" }),
        );
        expect(await delivery(theirDelivery)).toEqual(
          expect.objectContaining({ callback: "http://stranger.test/notifications" }),
        );
        expect(await db.prisma.oneRecordPartner.findUniqueOrThrow({ where: { organization } })).toEqual(
          expect.objectContaining({ serverUrl: NEW }),
        );
      });

      it("registered again on the same server, nothing moves; another partner on the old server keeps the notifications queued under no subscription", async () => {
        const { organization, clientId } = await registered();
        const oldEndpoint = `${OLD}/notifications`;
        const live = await subscription(organization, oldEndpoint);
        const unsubscribed = await queued(null, oldEndpoint);
        const before = await subscriptionRow(live);
        await admin.add({ serverUrl: OLD, clientId, announceObjects: true });
        expect(await subscriptionRow(live)).toEqual(before);

        await registered(OLD); // a second partner on the same server
        const pending = await queued(live, oldEndpoint);
        await admin.add({ serverUrl: NEW, clientId });
        expect(await delivery(pending)).toEqual(expect.objectContaining({ callback: `${NEW}/notifications` }));
        // It may be the other partner's: it stays where it was queued.
        expect(await delivery(unsubscribed)).toEqual(expect.objectContaining({ callback: oldEndpoint }));
      });

      it("the statement counts what it moved, and moving again moves nothing", async () => {
        const { organization } = await registered();
        const live = await subscription(organization, `${OLD}/notifications`);
        await queued(live, `${OLD}/notifications`);
        await queued(null, `${OLD}/notifications`);
        const move = {
          organization,
          oldEndpoint: `${OLD}/notifications`,
          newEndpoint: `${NEW}/notifications`,
          newOrigin: "http://new.partner.test",
        };
        expect(await movePartnerNotifications.rows(db.sql, move)).toEqual([
          { subscriptions: 1, deliveries: 1, unsubscribed: 1 },
        ]);
        expect(await movePartnerNotifications.rows(db.sql, move)).toEqual([
          { subscriptions: 0, deliveries: 0, unsubscribed: 0 },
        ]);
      });
    });

    describe("onerecord/partner-remove (partner:remove)", () => {
      it("ends what is queued for the removed partner's server (DEAD, partner removed, lease cleared); what was sent, other servers' and its subscriptions stay", async () => {
        const { organization, clientId } = await registered(`${OLD}/`);
        const endpoint = `${OLD}/notifications`;
        const live = await subscription(organization, endpoint);
        const pending = await queued(live, endpoint);
        const parked = await queued(null, endpoint, "PARKED");
        const announcement = await queued(null, endpoint);
        const delivered = await queued(live, endpoint, "DELIVERED");
        const other = await queued(null, "http://other.test/notifications");

        expect(await admin.remove(clientId)).toBe(true);

        for (const id of [pending, parked, announcement])
          expect(await delivery(id)).toEqual(
            expect.objectContaining({
              status: "DEAD",
              lastError: "partner removed",
              leaseUntil: null,
              leaseToken: null,
              completedAt: expect.any(Date),
            }),
          );
        expect(await delivery(delivered)).toEqual(expect.objectContaining({ status: "DELIVERED" }));
        expect(await delivery(other)).toEqual(expect.objectContaining({ status: "PENDING" }));
        expect(await subscriptionRow(live)).toEqual(expect.objectContaining({ status: "REQUEST_ACCEPTED" }));
        expect(await db.prisma.oneRecordPartner.count({ where: { organization } })).toBe(0);
        expect(await admin.remove(clientId)).toBe(false);
      });

      it("another partner still on the server keeps what is queued to it", async () => {
        const leaving = await registered();
        await registered();
        const queuedThere = await queued(null, `${OLD}/notifications`);
        expect(await removePartner.rows(db.sql, { organization: leaving.organization })).toEqual([
          { removed: 1, deliveries_ended: 0 },
        ]);
        expect(await delivery(queuedThere)).toEqual(expect.objectContaining({ status: "PENDING" }));
        expect(await removePartner.rows(db.sql, { organization: leaving.organization })).toEqual([
          { removed: 0, deliveries_ended: 0 },
        ]);
      });
    });
  });
});
