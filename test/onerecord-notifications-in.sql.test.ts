import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { storeReceivedNotification } from "../src/onerecord/sql/notification-received-store.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { openTestDatabase } from "./support/test-database";

const QUOTA = "onerecord_notifications_received";
const BODY = JSON.stringify({ "@type": ["https://onerecord.iata.org/ns/api#Notification"] });

/**
 * The statement that stores the notifications other servers send, on both databases: once per sender
 * and Notification-Id, each spending its sender's daily quota in the same statement.
 */
describe.each(BACKENDS)("ONE Record notifications-in statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    const store = (
      sender: string,
      notificationId: string | null,
      { maxCount = 1_000, maxBytes = 1_000_000, bytes = 100 } = {},
    ) =>
      storeReceivedNotification.rows(db.sql, {
        quota: QUOTA,
        sender,
        notificationId,
        eventType: "LOGISTICS_EVENT_RECEIVED",
        logisticsObject: "https://1r.partner.test/logistics-objects/x",
        body: BODY,
        bytes,
        maxCount,
        maxBytes,
      });
    const spent = async (sender: string) =>
      (
        await db.prisma.$queryRawUnsafe<Array<{ count: number; bytes: bigint }>>(
          "SELECT count, bytes FROM quota_usage WHERE quota = $1 AND subject = $2",
          QUOTA,
          sender,
        )
      ).map((row) => ({ count: Number(row.count), bytes: Number(row.bytes) }))[0];
    const stored = { fresh: true, spent: true, id: expect.any(String) };

    describe("onerecord/notification-received-store", () => {
      it("stores a sender's Notification-Id once, spending once; another sender's same id and notifications without one each time", async () => {
        const sender = `organization-${randomUUID()}`;
        const id = randomUUID();
        expect(await store(sender, id)).toEqual([stored]);
        expect(await store(sender, id)).toEqual([{ fresh: false, spent: false, id: null }]);
        expect(await store(`https://1r.other.test/logistics-objects/${randomUUID()}`, id)).toEqual([stored]);
        expect(await store(sender, null)).toEqual([stored]);
        expect(await store(sender, null)).toEqual([stored]);
        expect(await spent(sender)).toEqual({ count: 3, bytes: 300 });
        const rows = await db.prisma.oneRecordNotificationReceived.findMany({ where: { sender } });
        expect(rows).toHaveLength(3);
        expect(rows[0]).toEqual(
          expect.objectContaining({
            notificationId: id,
            eventType: "LOGISTICS_EVENT_RECEIVED",
            logisticsObject: "https://1r.partner.test/logistics-objects/x",
            body: { "@type": ["https://onerecord.iata.org/ns/api#Notification"] },
          }),
        );
      });

      it("stores nothing past maxCount or maxBytes of the UTC day, answers a repeat as one even then, and starts again the next day", async () => {
        const sender = `organization-${randomUUID()}`;
        const limits = { maxCount: 2, maxBytes: 250, bytes: 100 };
        const first = randomUUID();
        expect(await store(sender, first, limits)).toEqual([stored]);
        expect(await store(sender, randomUUID(), limits)).toEqual([stored]);
        expect(await store(sender, randomUUID(), limits)).toEqual([{ fresh: true, spent: false, id: null }]);
        expect(await store(sender, first, limits)).toEqual([{ fresh: false, spent: false, id: null }]);
        expect(await spent(sender)).toEqual({ count: 2, bytes: 200 });
        // Bytes: 200 + 100 would pass 250 whatever the count.
        expect(await store(sender, randomUUID(), { ...limits, maxCount: 10 })).toEqual([
          { fresh: true, spent: false, id: null },
        ]);
        expect(await db.prisma.oneRecordNotificationReceived.count({ where: { sender } })).toBe(2);

        await db.sql.query("UPDATE quota_usage SET day = day - 1 WHERE quota = $1 AND subject = $2", [QUOTA, sender]);
        expect(await store(sender, randomUUID(), limits)).toEqual([stored]);
        expect(await spent(sender)).toEqual({ count: 1, bytes: 100 });
      });

      it("30 at once with maxCount 10 store exactly 10", async () => {
        const sender = `organization-${randomUUID()}`;
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, () => store(sender, randomUUID(), { maxCount: 10 })),
        );
        expect(outcomes.filter(([outcome]) => outcome!.id !== null)).toHaveLength(10);
        expect(await db.prisma.oneRecordNotificationReceived.count({ where: { sender } })).toBe(10);
        expect(await spent(sender)).toEqual({ count: 10, bytes: 1_000 });
      });
    });
  });
});
