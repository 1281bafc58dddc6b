import { randomUUID } from "node:crypto";
import { sqlStateOf } from "../src/db/availability";
import type { Database } from "../src/db/database";
import { enable } from "../src/subscriptions/sql/enable.sql";
import { existing } from "../src/subscriptions/sql/existing.sql";
import { find } from "../src/subscriptions/sql/find.sql";
import { insertWithinCap } from "../src/subscriptions/sql/insert-within-cap.sql";
import { list } from "../src/subscriptions/sql/list.sql";
import { purgeExpired } from "../src/subscriptions/sql/purge-expired.sql";
import { remove } from "../src/subscriptions/sql/remove.sql";
import { replace } from "../src/subscriptions/sql/replace.sql";
import { standing } from "../src/subscriptions/sql/standing.sql";
import type { SubscriptionRow } from "../src/subscriptions/sql/subscription-columns";
import { updateKeepingCallback } from "../src/subscriptions/sql/update-keeping-callback.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

/** Each statement and script of subscriptions/sql/ on its own, on both databases. */
describe.each(BACKENDS)("subscription statements on %s", (backend) => {
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

    const ago = (ms: number) => new Date(Date.now() - ms);
    const X = "http://receiver.test/x";
    const Y = "http://receiver.test/y";

    it("existing and standing find the client's live subscription of (awb, callback) and count its live ones", async () => {
      const clientId = await fx.client();
      const awb = fx.awb();
      const live = await fx.subscription(clientId, { awb, callback: X });
      await fx.subscription(clientId, { awb, callback: Y, expiresAt: ago(1_000) });
      const other = await fx.client();
      await fx.subscription(other, { awb, callback: Y });
      expect(await existing.rows(db.sql, { clientId, awb, callback: X })).toEqual([{ id: live }]);
      expect(await existing.rows(db.sql, { clientId, awb, callback: Y })).toEqual([]);
      expect(await existing.rows(db.sql, { clientId: other, awb, callback: X })).toEqual([]);
      expect(await standing.rows(db.sql, { clientId, awb, callback: X })).toEqual([{ existing: live, count: 1 }]);
      expect(await standing.rows(db.sql, { clientId, awb, callback: Y })).toEqual([{ existing: null, count: 1 }]);
    });

    it("insert-within-cap inserts below the cap, in place of an expired one of the same pair, and not at the cap or over a live one of the pair", async () => {
      const clientId = await fx.client();
      const awb = fx.awb();
      const expired = await fx.subscription(clientId, { awb, callback: Y, expiresAt: ago(1_000) });
      const queued = await fx.delivery({ subscriptionId: expired, clientId });
      await fx.subscription(clientId, { callback: X });
      const insert = (callback: string, cap: number, id = randomUUID()) =>
        insertWithinCap.run(db.sql, {
          id,
          clientId,
          awb,
          callback,
          states: ["RCS", "DEP"],
          expiresAt: "2030-01-02T03:04:05.678Z",
          cap,
        });
      const id = randomUUID();
      const results = await insert(Y, 2, id);
      const row = results[3]![0] as { count: number } & SubscriptionRow;
      expect(row).toMatchObject({ count: 1, id, awb, callback: Y, states: ["RCS", "DEP"], disabledAt: null });
      expect(new Date(row.expiresAt!).toISOString()).toBe("2030-01-02T03:04:05.678Z");
      expect(new Date(row.createdAt).getTime()).toBe(new Date(row.updatedAt).getTime());
      expect(await db.prisma.subscription.findUnique({ where: { id: expired } })).toBeNull();
      expect(await fx.deliveryRow(queued)).toMatchObject({
        status: "DEAD",
        lastError: "subscription expired before it was sent",
        leaseToken: null,
      });

      expect((await insert("http://receiver.test/z", 2))[3]).toEqual([expect.objectContaining({ count: 2, id: null })]);
      expect((await insert(Y, 10))[3]).toEqual([expect.objectContaining({ count: 2, id: null })]);
      expect(await db.prisma.subscription.count({ where: { clientId } })).toBe(2);
    });

    it("purge-expired deletes the client's expired subscription of the pair, its queued notifications marked dead, and nothing live", async () => {
      const clientId = await fx.client();
      const awb = fx.awb();
      const expired = await fx.subscription(clientId, { awb, callback: Y, expiresAt: ago(1_000) });
      const pending = await fx.delivery({
        subscriptionId: expired,
        clientId,
        leaseToken: randomUUID(),
        leaseUntil: ago(1),
      });
      const parked = await fx.delivery({ subscriptionId: expired, clientId, status: "PARKED" });
      const delivered = await fx.delivery({ subscriptionId: expired, clientId, status: "DELIVERED" });
      const live = await fx.subscription(clientId, { awb, callback: X });
      const results = await purgeExpired.run(db.sql, { clientId, awb, callback: Y });
      expect(results[1]).toEqual([{ id: expired }]);
      for (const id of [pending, parked])
        expect(await fx.deliveryRow(id)).toMatchObject({ status: "DEAD", leaseToken: null, subscriptionId: null });
      expect(await fx.deliveryRow(delivered)).toMatchObject({ status: "DELIVERED", lastError: null });
      expect((await purgeExpired.run(db.sql, { clientId, awb, callback: X }))[1]).toEqual([]);
      expect(await fx.subscriptionRow(live)).toMatchObject({ callback: X });
    });

    it("find answers the client's subscription, expired or not, and not another client's", async () => {
      const clientId = await fx.client();
      const expiresAt = ago(1_000);
      const id = await fx.subscription(clientId, { callback: X, expiresAt });
      const [row] = await find.rows(db.sql, { id, clientId });
      expect(row).toMatchObject({ id, callback: X, states: ["*"], disabledAt: null, disabledReason: null });
      expect(new Date(row!.expiresAt!).getTime()).toBe(expiresAt.getTime());
      expect(await find.rows(db.sql, { id, clientId: await fx.client() })).toEqual([]);
    });

    it("update-keeping-callback updates a live subscription whose callback stays, and otherwise says what stands in the way", async () => {
      const clientId = await fx.client();
      const id = await fx.subscription(clientId, { callback: X });
      const before = await fx.subscriptionRow(id);
      const newAwb = fx.awb();
      const values = (callback: string, of = id, awb = newAwb) => ({
        id: of,
        clientId,
        awb,
        callback,
        states: ["ARR"],
        expiresAt: null,
      });
      const [updated] = await updateKeepingCallback.rows(db.sql, values(X));
      expect(updated).toMatchObject({ current: X, existing: null, id, awb: newAwb, callback: X, states: ["ARR"] });
      expect(new Date(updated!.updatedAt!).getTime()).toBeGreaterThan(before.updatedAt.getTime());

      expect(await updateKeepingCallback.rows(db.sql, values(Y))).toEqual([
        expect.objectContaining({ current: X, existing: null, id: null }),
      ]);
      const holder = await fx.subscription(clientId, { awb: newAwb, callback: Y });
      const other = await fx.subscription(clientId, { callback: Y });
      expect(await updateKeepingCallback.rows(db.sql, values(Y, other))).toEqual([
        expect.objectContaining({ current: Y, existing: holder, id: null }),
      ]);
      const expired = await fx.subscription(clientId, { callback: X, expiresAt: ago(1_000) });
      for (const missing of [randomUUID(), expired])
        expect(await updateKeepingCallback.rows(db.sql, values(X, missing, fx.awb()))).toEqual([
          expect.objectContaining({ current: null, existing: null, id: null }),
        ]);
      expect(await fx.subscriptionRow(other)).toMatchObject({ callback: Y, states: ["*"] });
    });

    it("replace writes every field of a live subscription, the callback included; a pair another holds fails as a unique violation", async () => {
      const clientId = await fx.client();
      const id = await fx.subscription(clientId, { callback: X });
      const awb = fx.awb();
      const values = (callback: string, of = id) => ({
        id: of,
        clientId,
        awb,
        callback,
        states: ["DEP"],
        expiresAt: "2030-01-01T00:00:00.000Z",
      });
      expect(await replace.rows(db.sql, values(Y))).toEqual([
        expect.objectContaining({ id, awb, callback: Y, states: ["DEP"] }),
      ]);
      const other = await fx.subscription(clientId, { callback: X });
      const error = await replace.rows(db.sql, values(Y, other)).catch((e: unknown) => e);
      expect(sqlStateOf(error)).toBe("23505");
      const expired = await fx.subscription(clientId, { expiresAt: ago(1_000) });
      expect(await replace.rows(db.sql, values("http://receiver.test/z", expired))).toEqual([]);
      expect(await replace.rows(db.sql, { ...values(X), clientId: await fx.client() })).toEqual([]);
    });

    it("enable clears the disabling and the failing clock and makes the parked notifications due; an enabled one is left as it was", async () => {
      const clientId = await fx.client();
      const id = await fx.subscription(clientId, { disabledAt: ago(1_000), failingSince: ago(60_000) });
      await db.prisma.subscription.update({ where: { id }, data: { disabledReason: "failing" } });
      const parked = await fx.delivery({
        subscriptionId: id,
        clientId,
        status: "PARKED",
        nextAttemptAt: ago(3_600_000),
      });
      const dead = await fx.delivery({ subscriptionId: id, clientId, status: "DEAD" });
      expect((await enable.run(db.sql, { id, clientId: await fx.client() }))[1]).toEqual([]);
      const results = await enable.run(db.sql, { id, clientId });
      expect(results[1]).toEqual([expect.objectContaining({ id, disabledAt: null, disabledReason: null })]);
      expect(await fx.subscriptionRow(id)).toMatchObject({ failingSince: null });
      const due = await fx.deliveryRow(parked);
      expect(due.status).toBe("PENDING");
      expect(due.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect((await fx.deliveryRow(dead)).status).toBe("DEAD");
      const { updatedAt } = await fx.subscriptionRow(id);
      await enable.run(db.sql, { id, clientId });
      expect((await fx.subscriptionRow(id)).updatedAt).toEqual(updatedAt);
    });

    it("remove deletes the client's subscription and answers it as it was", async () => {
      const clientId = await fx.client();
      const id = await fx.subscription(clientId, { callback: X });
      expect(await remove.rows(db.sql, { id, clientId: await fx.client() })).toEqual([]);
      expect(await remove.rows(db.sql, { id, clientId })).toEqual([expect.objectContaining({ id, callback: X })]);
      expect(await remove.rows(db.sql, { id, clientId })).toEqual([]);
    });

    it("list answers the client's subscriptions oldest first, by awb and callback when given, after the cursor, up to the limit", async () => {
      const clientId = await fx.client();
      const awb = fx.awb();
      const at = (second: number) => new Date(Date.parse("2026-01-01T00:00:00Z") + second * 1_000);
      const s1 = await fx.subscription(clientId, { awb, callback: X, createdAt: at(1) });
      const s2 = await fx.subscription(clientId, { callback: X, createdAt: at(2) });
      const s3 = await fx.subscription(clientId, { awb, callback: Y, createdAt: at(3) });
      const s4 = await fx.subscription(clientId, { callback: Y, createdAt: at(3) });
      await fx.subscription(await fx.client(), { awb, callback: X });
      const ids = async (filter: { awb?: string; callback?: string; after?: string; limit?: number }) => {
        const cursor = filter.after ? await fx.subscriptionRow(filter.after) : undefined;
        const rows = await list.rows(db.sql, {
          clientId,
          awb: filter.awb ?? null,
          callback: filter.callback ?? null,
          afterCreatedAt: cursor?.createdAt ?? null,
          afterId: cursor?.id ?? null,
          limit: filter.limit ?? 100,
        });
        return rows.map((row) => row.id);
      };
      const tied = [s3, s4].sort();
      expect(await ids({})).toEqual([s1, s2, ...tied]);
      expect(await ids({ awb })).toEqual([s1, s3]);
      expect(await ids({ callback: X })).toEqual([s1, s2]);
      expect(await ids({ awb, callback: Y })).toEqual([s3]);
      expect(await ids({ after: s2 })).toEqual(tied);
      expect(await ids({ after: tied[0] })).toEqual([tied[1]]);
      expect(await ids({ limit: 2 })).toEqual([s1, s2]);
    });
  });
});
