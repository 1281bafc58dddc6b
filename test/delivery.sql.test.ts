import { randomUUID } from "node:crypto";
import { Client } from "pg";
import type { Database } from "../src/db/database";
import { jsonColumn } from "../src/db/sql-statement";
import { claimDue } from "../src/delivery/sql/claim-due.sql";
import { deferOrigin } from "../src/delivery/sql/defer-origin.sql";
import { parkPending } from "../src/delivery/sql/park-pending.sql";
import { queueDeliveries } from "../src/delivery/sql/queue-deliveries.sql";
import { queueStats } from "../src/delivery/sql/queue-stats.sql";
import { recordOutcomes } from "../src/delivery/sql/record-outcomes.sql";
import { releaseClaims } from "../src/delivery/sql/release-claims.sql";
import { requeueDead, requeueDelivery } from "../src/delivery/sql/requeue.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";
import { until, within } from "./support/webhooks";

/** Each statement of delivery/sql/ on its own, on both databases. */
describe.each(BACKENDS)("delivery statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let url: string | undefined;
    let fx: ReturnType<typeof fixtures>;
    beforeAll(async () => {
      ({ database: db, url } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(() => emptyTables(db));

    const ago = (ms: number) => new Date(Date.now() - ms);
    const HOUR = 3_600_000;
    const leased = (token: string) => ({ leaseToken: token, leaseUntil: new Date(Date.now() + 60_000) });

    it("queue-deliveries writes a row per element, the leased ones under the token, and notifies only when told", async () => {
      const clientId = await fx.client();
      const [first, second] = [await fx.subscription(clientId), await fx.subscription(clientId)];
      const eventId = await fx.event();
      const [leasedId, freeId] = [randomUUID(), randomUUID()];
      const token = randomUUID();
      const values = (ids: string[], subscriptionIds: string[], notify: boolean) => ({
        ids: jsonColumn(ids),
        kinds: jsonColumn(ids.map(() => "WEBHOOK")),
        eventIds: jsonColumn(ids.map(() => eventId)),
        subscriptionIds: jsonColumn(subscriptionIds),
        oneRecordSubscriptionIds: jsonColumn(ids.map(() => null)),
        clientIds: jsonColumn(ids.map(() => clientId)),
        callbacks: jsonColumn(ids.map((id) => `http://receiver.test/${id}`)),
        origins: jsonColumn(ids.map(() => "http://receiver.test")),
        payloads: jsonColumn(ids.map((id) => `{"for":"${id}"}`)),
        leased: jsonColumn(ids.map((id) => id === leasedId)),
        leaseMs: 60_000,
        leaseToken: token,
        notify,
        traceParent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      });
      expect(await queueDeliveries.rows(db.prisma, values([leasedId, freeId], [first, second], true))).toEqual([
        { notified: 1 },
      ]);
      const held = await fx.deliveryRow(leasedId);
      expect(held).toMatchObject({
        status: "PENDING",
        leaseToken: token,
        subscriptionId: first,
        payload: `{"for":"${leasedId}"}`,
      });
      expect(held.leaseUntil!.getTime()).toBeGreaterThan(Date.now() + 50_000);
      expect(held.traceParent).toBe(values([], [], true).traceParent);
      expect(await fx.deliveryRow(freeId)).toMatchObject({
        leaseToken: null,
        leaseUntil: null,
        callback: `http://receiver.test/${freeId}`,
      });

      const third = await fx.subscription(clientId);
      expect(await queueDeliveries.rows(db.prisma, values([randomUUID()], [third], false))).toEqual([{ notified: 0 }]);
    });

    it("claim-due leases the oldest due deliveries, at most perOrigin of an origin and limit in all, none excluded, held, expired or disabled (those parked)", async () => {
      const clientId = await fx.client();
      const live = await fx.subscription(clientId);
      const expired = await fx.subscription(clientId, { expiresAt: ago(1_000) });
      const disabled = await fx.subscription(clientId, { disabledAt: ago(1_000) });
      const eventAt = new Date(Date.parse("2026-01-02T03:04:05.678Z"));
      const due = (origin: string, msAgo: number, more: object = {}) =>
        fx.delivery({ subscriptionId: live, clientId, origin, nextAttemptAt: ago(msAgo), ...more });
      const a1 = await fx.delivery({
        subscriptionId: live,
        clientId,
        origin: "http://a.test",
        nextAttemptAt: ago(3_000),
        eventId: await fx.event(fx.awb(), eventAt),
      });
      const a2 = await due("http://a.test", 2_000);
      const a3 = await due("http://a.test", 1_000);
      const b1 = await due("http://b.test", 1_500);
      await due("http://c.test", 5_000); // excluded
      await due("http://b.test", 4_000, leased(randomUUID())); // held by a live lease
      await due("http://a.test", -60_000); // not due yet
      const ofExpired = await fx.delivery({ subscriptionId: expired, clientId, origin: "http://d.test" });
      const ofDisabled = await fx.delivery({ subscriptionId: disabled, clientId, origin: "http://e.test" });

      const token = randomUUID();
      const claim = (limit: number) =>
        claimDue.rows(db.sql, {
          excludeOrigins: ["http://c.test"],
          scanLimit: 20,
          perOrigin: 2,
          leaseMs: 30_000,
          limit,
          leaseToken: token,
        });
      const [first, ...none] = await claim(1);
      expect(none).toEqual([]);
      expect(first).toMatchObject({
        id: a1,
        origin: "http://a.test",
        payload: "{}",
        attempt_count: 0,
        client_id: clientId,
      });
      expect(new Date(first!.received_at).getTime()).toBe(eventAt.getTime());
      expect((await claim(10)).map((row) => row.id).sort()).toEqual([a2, a3, b1].sort());
      for (const id of [a1, a2, a3, b1]) {
        const row = await fx.deliveryRow(id);
        expect(row.leaseToken).toBe(token);
        expect(row.leaseUntil!.getTime()).toBeGreaterThan(Date.now() + 20_000);
      }
      expect(await fx.deliveryRow(ofDisabled)).toMatchObject({ status: "PARKED", leaseToken: null });
      expect(await fx.deliveryRow(ofExpired)).toMatchObject({ status: "PENDING", leaseToken: null });
    });

    it("defer-origin moves the origin's oldest due, unheld deliveries, up to limit, byMs ahead", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      const at = (origin: string, msAgo: number, more: object = {}) =>
        fx.delivery({ subscriptionId, clientId, origin, nextAttemptAt: ago(msAgo), ...more });
      const [a1, a2, held, b1] = [
        await at("http://a.test", 3_000),
        await at("http://a.test", 2_000),
        await at("http://a.test", 4_000, leased(randomUUID())),
        await at("http://b.test", 3_000),
      ];
      const defer = (limit: number) => deferOrigin.rows(db.sql, { origin: "http://a.test", byMs: 60_000, limit });
      expect(await defer(1)).toEqual([{ n: 1 }]);
      const ahead = (await fx.deliveryRow(a1)).nextAttemptAt.getTime() - Date.now();
      expect(ahead).toBeGreaterThan(50_000);
      expect(ahead).toBeLessThanOrEqual(60_000);
      expect((await fx.deliveryRow(a2)).nextAttemptAt.getTime()).toBeLessThan(Date.now());
      expect(await defer(10)).toEqual([{ n: 1 }]);
      expect((await fx.deliveryRow(a2)).nextAttemptAt.getTime()).toBeGreaterThan(Date.now());
      for (const untouched of [held, b1])
        expect((await fx.deliveryRow(untouched)).nextAttemptAt.getTime()).toBeLessThan(Date.now());
    });

    it("release-claims clears a lease its token holds, and leaves one another token holds", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      const [mine, theirs] = [randomUUID(), randomUUID()];
      const released = await fx.delivery({ subscriptionId, clientId, ...leased(mine) });
      const kept = await fx.delivery({ subscriptionId, clientId, ...leased(theirs) });
      expect(await releaseClaims.rows(db.sql, { ids: [released, kept], tokens: [mine, randomUUID()] })).toEqual([
        { n: 1 },
      ]);
      expect(await fx.deliveryRow(released)).toMatchObject({ leaseToken: null, leaseUntil: null, status: "PENDING" });
      expect(await fx.deliveryRow(kept)).toMatchObject({ leaseToken: theirs });
    });

    type Outcome = {
      id: string;
      token: string;
      status: "DELIVERED" | "PENDING" | "DEAD";
      statusCode: number | null;
      nextAttemptAt?: Date;
      startedAt?: Date;
    };
    const outcomes = (list: Outcome[], disableAfterHours: number) => ({
      ids: list.map((o) => o.id),
      tokens: list.map((o) => o.token),
      statuses: list.map((o) => o.status),
      nextAttemptsAt: list.map((o) => o.nextAttemptAt?.toISOString() ?? null),
      lastErrors: list.map((o) => (o.status === "DELIVERED" ? null : `HTTP ${o.statusCode}`)),
      startedAt: list.map((o) => (o.startedAt ?? new Date()).toISOString()),
      durationsMs: list.map(() => 12),
      statusCodes: list.map((o) => o.statusCode),
      errors: list.map((o) => (o.status === "DELIVERED" ? null : `HTTP ${o.statusCode}`)),
      disableAfterHours,
    });

    it("record-outcomes records an attempt its token holds, drops one whose token no longer holds, and a success stops the failing clock", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId, { failingSince: ago(HOUR) });
      const [t1, t2] = [randomUUID(), randomUUID()];
      const sent = await fx.delivery({ subscriptionId, clientId, ...leased(t1) });
      const stale = await fx.delivery({ subscriptionId, clientId, ...leased(t2) });
      const answer = await recordOutcomes.rows(
        db.sql,
        outcomes(
          [
            { id: sent, token: t1, status: "DELIVERED", statusCode: 204 },
            { id: stale, token: randomUUID(), status: "PENDING", statusCode: 503, nextAttemptAt: new Date() },
          ],
          0,
        ),
      );
      expect(answer).toEqual([{ n: 1, disabled: [] }]);
      const row = await fx.deliveryRow(sent);
      expect(row).toMatchObject({
        status: "DELIVERED",
        attemptCount: 1,
        leaseToken: null,
        leaseUntil: null,
        lastError: null,
      });
      expect(row.completedAt).not.toBeNull();
      expect(row.attempts).toEqual([expect.objectContaining({ statusCode: 204, durationMs: 12, error: null })]);
      expect(await fx.deliveryRow(stale)).toMatchObject({
        status: "PENDING",
        attemptCount: 0,
        leaseToken: t2,
        attempts: [],
      });
      expect((await fx.subscriptionRow(subscriptionId)).failingSince).toBeNull();
    });

    it("record-outcomes starts the failing clock, disables a subscription failing longer than the hours, and reports only those it disabled", async () => {
      const clientId = await fx.client();
      const failingLong = ago(3 * HOUR);
      const fresh = await fx.subscription(clientId);
      const overdue = await fx.subscription(clientId, { failingSince: failingLong });
      const alreadyDisabled = await fx.subscription(clientId, {
        failingSince: ago(48 * HOUR),
        disabledAt: ago(24 * HOUR),
      });
      const neverDisabled = await fx.subscription(clientId, { failingSince: failingLong });
      const tokens = [randomUUID(), randomUUID(), randomUUID(), randomUUID()] as const;
      const [d1, d2, d3, d4] = [
        await fx.delivery({ subscriptionId: fresh, clientId, ...leased(tokens[0]) }),
        await fx.delivery({ subscriptionId: overdue, clientId, ...leased(tokens[1]) }),
        await fx.delivery({ subscriptionId: alreadyDisabled, clientId, ...leased(tokens[2]) }),
        await fx.delivery({ subscriptionId: neverDisabled, clientId, ...leased(tokens[3]) }),
      ];
      const retryAt = new Date(Date.now() + 600_000);
      const startedAt = new Date(Date.parse("2026-01-02T03:04:05.678Z"));
      const [answer] = await recordOutcomes.rows(
        db.sql,
        outcomes(
          [
            { id: d1, token: tokens[0], status: "PENDING", statusCode: 503, nextAttemptAt: retryAt, startedAt },
            { id: d2, token: tokens[1], status: "DEAD", statusCode: 410 },
            { id: d3, token: tokens[2], status: "DELIVERED", statusCode: 200 },
          ],
          2,
        ),
      );
      const since = failingLong.toISOString().replace(/\.\d{3}Z$/, "Z");
      expect(answer).toEqual({
        n: 3,
        disabled: [
          {
            kind: "WEBHOOK",
            id: overdue,
            clientId,
            callback: (await fx.subscriptionRow(overdue)).callback,
            reason: `every delivery attempt failed since ${since}`,
          },
        ],
      });
      expect(await fx.subscriptionRow(fresh)).toMatchObject({ failingSince: startedAt, disabledAt: null });
      expect((await fx.subscriptionRow(overdue)).disabledAt).not.toBeNull();
      // A success on a disabled subscription stops its clock, and is no disabling.
      expect(await fx.subscriptionRow(alreadyDisabled)).toMatchObject({ failingSince: null, disabledReason: null });
      expect((await fx.subscriptionRow(alreadyDisabled)).disabledAt).not.toBeNull();
      expect(await fx.deliveryRow(d1)).toMatchObject({
        status: "PENDING",
        nextAttemptAt: retryAt,
        lastError: "HTTP 503",
        completedAt: null,
      });
      expect((await fx.deliveryRow(d2)).completedAt).not.toBeNull();

      // With 0 hours nothing is disabled, however long it has failed.
      expect(
        await recordOutcomes.rows(db.sql, outcomes([{ id: d4, token: tokens[3], status: "DEAD", statusCode: 500 }], 0)),
      ).toEqual([{ n: 1, disabled: [] }]);
      expect(await fx.subscriptionRow(neverDisabled)).toMatchObject({ disabledAt: null, failingSince: failingLong });
    });

    (backend === "postgres" ? it : it.skip)(
      "claim-due: two claims at once take disjoint rows, the second stepping over the rows the first holds instead of waiting (PostgreSQL)",
      async () => {
        const clientId = await fx.client();
        const subscriptionId = await fx.subscription(clientId);
        const ids: string[] = [];
        for (let i = 0; i < 6; i++)
          ids.push(
            await fx.delivery({ subscriptionId, clientId, origin: "http://a.test", nextAttemptAt: ago(10_000 - i) }),
          );
        const params = (limit: number) => ({
          excludeOrigins: [],
          scanLimit: limit,
          perOrigin: 10,
          leaseMs: 30_000,
          limit,
          leaseToken: randomUUID(),
        });
        const first = new Client({ connectionString: url });
        await first.connect();
        try {
          // The first claim's transaction stays open: the three rows it scanned (and leased) stay locked.
          await first.query("BEGIN");
          const held = (await first.query<{ id: string }>(claimDue.text, claimDue.values(params(3)))).rows.map(
            (r) => r.id,
          );
          // A second claim meanwhile answers at once with the other three (one that waited would never end here).
          const second = await within("the second claim", 10_000, claimDue.rows(db.sql, params(10)));
          await first.query("COMMIT");
          expect(held).toHaveLength(3);
          expect(second.map((r) => r.id).filter((id) => held.includes(id))).toEqual([]);
          expect([...held, ...second.map((r) => r.id)].sort()).toEqual([...ids].sort());
        } finally {
          await first.end();
        }
      },
    );

    (backend === "postgres" ? it : it.skip)(
      "record-outcomes: of two recorders disabling one subscription at once, the one that waited for the other reports nothing (PostgreSQL)",
      async () => {
        const clientId = await fx.client();
        const subscriptionId = await fx.subscription(clientId, { failingSince: ago(3 * HOUR) });
        const [t1, t2] = [randomUUID(), randomUUID()];
        const d1 = await fx.delivery({ subscriptionId, clientId, ...leased(t1) });
        const d2 = await fx.delivery({ subscriptionId, clientId, ...leased(t2) });
        const first = new Client({ connectionString: url });
        await first.connect();
        try {
          await first.query("BEGIN");
          const firstValues = outcomes([{ id: d1, token: t1, status: "DEAD", statusCode: 500 }], 2);
          const { rows } = await first.query(recordOutcomes.text, recordOutcomes.values(firstValues));
          expect(rows[0].disabled.map((d: { id: string }) => d.id)).toEqual([subscriptionId]);
          const second = recordOutcomes.rows(
            db.sql,
            outcomes([{ id: d2, token: t2, status: "DEAD", statusCode: 500 }], 2),
          );
          await until(
            async () =>
              (
                await db.sql.query<{ n: number }>(
                  `SELECT count(*)::int AS n FROM pg_stat_activity
                   WHERE datname = current_database() AND wait_event_type = 'Lock'`,
                  [],
                )
              )[0]!.n > 0,
            { what: "the second recorder waiting for the first" },
          );
          await first.query("COMMIT");
          expect(await second).toEqual([{ n: 1, disabled: [] }]);
        } finally {
          await first.end();
        }
        expect((await fx.subscriptionRow(subscriptionId)).disabledReason).toMatch(
          /^every delivery attempt failed since /,
        );
      },
    );

    it("park-pending parks the pending deliveries of disabled subscriptions that no live lease holds, clearing a lease that ran out", async () => {
      const clientId = await fx.client();
      const disabled = await fx.subscription(clientId, { disabledAt: ago(1_000) });
      const enabled = await fx.subscription(clientId);
      const unheld = await fx.delivery({ subscriptionId: disabled, clientId });
      const ranOut = await fx.delivery({
        subscriptionId: disabled,
        clientId,
        leaseToken: randomUUID(),
        leaseUntil: ago(1_000),
      });
      const token = randomUUID();
      const held = await fx.delivery({ subscriptionId: disabled, clientId, ...leased(token) });
      const dead = await fx.delivery({ subscriptionId: disabled, clientId, status: "DEAD" });
      const ofEnabled = await fx.delivery({ subscriptionId: enabled, clientId });
      expect(
        await parkPending.rows(db.sql, { subscriptionIds: [disabled, enabled], oneRecordSubscriptionIds: [] }),
      ).toEqual([{ n: 2 }]);
      for (const id of [unheld, ranOut])
        expect(await fx.deliveryRow(id)).toMatchObject({ status: "PARKED", leaseToken: null, leaseUntil: null });
      expect(await fx.deliveryRow(held)).toMatchObject({ status: "PENDING", leaseToken: token });
      expect(await fx.deliveryRow(dead)).toMatchObject({ status: "DEAD" });
      expect(await fx.deliveryRow(ofEnabled)).toMatchObject({ status: "PENDING" });
    });

    it("queue-stats counts the pending deliveries and answers when the longest-due one came due", async () => {
      expect(await queueStats.rows(db.sql, {})).toEqual([{ pending: 0, oldest: null }]);
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      const dueAt = ago(5_000);
      await fx.delivery({ subscriptionId, clientId, nextAttemptAt: dueAt });
      await fx.delivery({ subscriptionId, clientId, nextAttemptAt: new Date(Date.now() + 60_000) });
      await fx.delivery({ subscriptionId, clientId, nextAttemptAt: ago(9_000), status: "DELIVERED" });
      const [row] = await queueStats.rows(db.sql, {});
      expect(row!.pending).toBe(2);
      expect(new Date(row!.oldest!).getTime()).toBe(dueAt.getTime());
    });

    it("requeue-delivery makes a finished delivery pending from a fresh schedule (parked while its subscription is disabled), fencing its last holder out", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      const disabled = await fx.subscription(clientId, { disabledAt: ago(1_000) });
      const dead = await fx.delivery({
        subscriptionId,
        clientId,
        status: "DEAD",
        completedAt: ago(1_000),
        ...leased(randomUUID()),
      });
      await db.prisma.delivery.update({ where: { id: dead }, data: { attemptCount: 8, nextAttemptAt: ago(HOUR) } });
      const pending = await fx.delivery({ subscriptionId, clientId });
      const ofDisabled = await fx.delivery({ subscriptionId: disabled, clientId, status: "DELIVERED" });
      expect(await requeueDelivery.affectedRows(db.prisma, { id: dead })).toBe(1);
      const row = await fx.deliveryRow(dead);
      expect(row).toMatchObject({
        status: "PENDING",
        attemptCount: 0,
        completedAt: null,
        leaseToken: null,
        leaseUntil: null,
      });
      expect(row.nextAttemptAt.getTime()).toBeGreaterThan(Date.now() - 60_000);
      expect(await requeueDelivery.affectedRows(db.prisma, { id: pending })).toBe(0);
      expect(await requeueDelivery.affectedRows(db.prisma, { id: ofDisabled })).toBe(1);
      expect((await fx.deliveryRow(ofDisabled)).status).toBe("PARKED");
    });

    it("requeue-dead requeues a client's subscription's dead deliveries created in the window", async () => {
      const clientId = await fx.client();
      const subscriptionId = await fx.subscription(clientId);
      const old = await fx.delivery({ subscriptionId, clientId, status: "DEAD", createdAt: ago(2 * HOUR) });
      const recent = await fx.delivery({ subscriptionId, clientId, status: "DEAD" });
      const delivered = await fx.delivery({ subscriptionId, clientId, status: "DELIVERED" });
      const values = (from: Date | null, to: Date | null, client = clientId) => ({
        subscriptionId,
        clientId: client,
        from: from?.toISOString() ?? null,
        to: to?.toISOString() ?? null,
      });
      expect(await requeueDead.affectedRows(db.prisma, values(null, null, await fx.client()))).toBe(0);
      expect(await requeueDead.affectedRows(db.prisma, values(ago(HOUR), null))).toBe(1);
      expect((await fx.deliveryRow(recent)).status).toBe("PENDING");
      expect(await requeueDead.affectedRows(db.prisma, values(null, ago(3 * HOUR)))).toBe(0);
      expect(await requeueDead.affectedRows(db.prisma, values(null, ago(HOUR)))).toBe(1);
      expect((await fx.deliveryRow(old)).status).toBe("PENDING");
      expect((await fx.deliveryRow(delivered)).status).toBe("DELIVERED");
    });
  });
});
