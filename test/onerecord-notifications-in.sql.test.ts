import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { insertReceivedNotification } from "../src/onerecord/sql/notification-received-insert.sql";
import { seenReceivedNotification } from "../src/onerecord/sql/notification-received-seen.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { openTestDatabase } from "./support/test-database";

/** The statements of notifications received from other servers, on both databases. */
describe.each(BACKENDS)("ONE Record notifications-in statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());

    describe("onerecord/notification-received-seen", () => {
      it("finds a sender's stored Notification-Id, not another sender's", async () => {
        const id = randomUUID();
        const seen = (sender: string) => seenReceivedNotification.rows(db.sql, { sender, notificationId: id });
        expect(await seen("organization-a")).toEqual([]);
        await insertReceivedNotification.rows(db.sql, {
          sender: "organization-a",
          notificationId: id,
          eventType: "LOGISTICS_OBJECT_UPDATED",
          logisticsObject: null,
          body: "{}",
        });
        expect(await seen("organization-a")).toEqual([{ seen: 1 }]);
        expect(await seen("https://1r.other.test/logistics-objects/org")).toEqual([]);
      });
    });
  });
});
