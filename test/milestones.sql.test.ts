import type { Database } from "../src/db/database";
import { jsonColumn } from "../src/db/sql-statement";
import { carrierStatusesOf } from "../src/milestones/sql/carrier-statuses-of.sql";
import { insertNumbered } from "../src/milestones/sql/insert-numbered.sql";
import { lockStreams } from "../src/milestones/sql/lock-streams.sql";
import { originalsOf } from "../src/milestones/sql/originals-of.sql";
import { recordCarrierStatuses } from "../src/milestones/sql/record-carrier-statuses.sql";
import { streamAfter } from "../src/milestones/sql/stream-after.sql";
import { streamHeads } from "../src/milestones/sql/stream-heads.sql";
import { subscriptionsOfAwbs } from "../src/milestones/sql/subscriptions-of-awbs.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

/** Each statement of milestones/sql/ on its own, on both databases. */
describe.each(BACKENDS)("milestone statements on %s", (backend) => {
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

    const heads = async (awbs: string[]) =>
      Object.fromEntries(
        (await streamHeads.rows(db.prisma, { awbs })).map((row) => [row.awb, Number(row.last_position)]),
      );
    const stored = (dedupeKey: string) => db.prisma.statusEvent.findUniqueOrThrow({ where: { dedupeKey } });

    it("lock-streams answers the heads of the AWBs' streams, creating the missing ones at 0", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      for (let i = 0; i < 3; i++) await fx.event(a);
      const rows = await db.prisma.$transaction((tx) => lockStreams.rows(tx, { awbs: [a, b].sort() }));
      expect(Object.fromEntries(rows.map((row) => [row.awb, Number(row.last_position)]))).toEqual({ [a]: 3, [b]: 0 });
      expect(await heads([a, b])).toEqual({ [a]: 3, [b]: 0 });
    });

    it("insert-numbered stores the events whose keys are new, numbered after their stream's head, and moves the heads", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      await fx.event(a);
      const { dedupeKey: storedKey } = await db.prisma.statusEvent.findFirstOrThrow({ where: { awb: a } });
      await db.prisma.statusEvent.create({
        data: { dedupeKey: "legacy-1", awb: a, state: "RCS", occurredAt: new Date(), position: 99 },
      });
      const receivedAt = new Date(Date.parse("2026-03-04T05:06:07.890Z"));
      const event = (dedupeKey: string, awb: string, state: string, legacyKey: string | null = null) => ({
        dedupeKey,
        awb,
        state,
        occurredAt: "2026-03-04T01:00:00.000Z",
        toaTimestamp: state === "ARR" ? "2026-03-05T01:00:00.000Z" : null,
        station: "FRA",
        flight: "LH400",
        legacyKey,
      });
      const events = [
        event("k1", a, "DEP"),
        event("k2", a, "ARR"),
        event("k3", b, "RCS"),
        event("k1", a, "MAN"), // a repeat of k1 within the call
        event("k4", a, "RCS", "legacy-1"), // stored before under its legacy key, same AWB and state
        event("k5", a, "RCS", "legacy-1-other"),
        event(storedKey, a, "DEP"), // stored already
        event("k6\ud800", b, "DEP"), // half of a surrogate pair: stored with U+FFFD in its place
      ];
      const values = (list: typeof events) => ({
        dedupeKeys: jsonColumn(list.map((e) => e.dedupeKey)),
        awbs: jsonColumn(list.map((e) => e.awb)),
        states: jsonColumn(list.map((e) => e.state)),
        occurredAt: jsonColumn(list.map((e) => e.occurredAt)),
        receivedAt: receivedAt.toISOString(),
        toaTimestamps: jsonColumn(list.map((e) => e.toaTimestamp)),
        stations: jsonColumn(list.map((e) => e.station)),
        flights: jsonColumn(list.map((e) => e.flight)),
        legacyKeys: jsonColumn(list.map((e) => e.legacyKey)),
      });
      const created = await db.prisma.$transaction(async (tx) => {
        await lockStreams.rows(tx, { awbs: [a, b].sort() });
        return insertNumbered.rows(tx, values(events));
      });
      const byKey = [...created].sort((x, y) => x.dedupeKey.localeCompare(y.dedupeKey));
      expect(byKey.map((row) => [row.dedupeKey, row.awb, row.state, Number(row.position)])).toEqual([
        ["k1", a, "DEP", 2],
        ["k2", a, "ARR", 3],
        ["k3", b, "RCS", 1],
        ["k5", a, "RCS", 4],
        ["k6\ufffd", b, "DEP", 2],
      ]);
      expect(byKey[1]).toMatchObject({
        station: "FRA",
        flight: "LH400",
        receivedAt,
        toaTimestamp: new Date("2026-03-05T01:00:00.000Z"),
      });
      expect(byKey[1]!.occurredAt).toEqual(new Date("2026-03-04T01:00:00.000Z"));
      expect(await stored("k2")).toMatchObject({ position: 3n, receivedAt });
      expect(await heads([a, b])).toEqual({ [a]: 4, [b]: 2 });
    });

    it("originals-of finds what each event repeats, by its dedupe key or its legacy key with the same AWB and state", async () => {
      const a = fx.awb();
      await db.prisma.statusEvent.createMany({
        data: [
          { dedupeKey: "k1", awb: a, state: "DEP", occurredAt: new Date(), position: 1 },
          { dedupeKey: "legacy-1", awb: a, state: "RCS", occurredAt: new Date(), position: 2 },
        ],
      });
      const rows = await originalsOf.rows(db.prisma, {
        dedupeKeys: ["k1", "k2", "k3", "k4"],
        legacyKeys: [null, "legacy-1", "legacy-1", null],
        awbs: [a, a, a, a],
        states: ["DEP", "RCS", "ARR", "DEP"],
      });
      expect(Object.fromEntries(rows.map((row) => [row.k, row.id]))).toEqual({
        k1: (await stored("k1")).id,
        k2: (await stored("legacy-1")).id,
      });
    });

    it("stream-after answers an AWB's events after a position in stream order, up to the limit", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      for (let i = 0; i < 5; i++) await fx.event(a);
      await fx.event(b);
      const positions = async (after: bigint, limit: number) =>
        (await streamAfter.rows(db.prisma, { awb: a, position: after, limit })).map((row) => Number(row.position));
      expect(await positions(1n, 3)).toEqual([2, 3, 4]);
      expect(await positions(4n, 10)).toEqual([5]);
      const [row] = await streamAfter.rows(db.prisma, { awb: b, position: 0n, limit: 1 });
      expect(row).toMatchObject({ awb: b, state: "DEP", station: null, flight: null, toaTimestamp: null });
      expect(row!.id).toBe((await db.prisma.statusEvent.findFirstOrThrow({ where: { awb: b } })).id);
    });

    it("stream-heads answers the heads of the AWBs that have a stream", async () => {
      const [a, b, none] = [fx.awb(), fx.awb(), fx.awb()];
      await fx.event(a);
      await fx.event(a);
      await fx.event(b);
      expect(await heads([a, b, none])).toEqual({ [a]: 2, [b]: 1 });
    });

    const status = (statusKey: string, awb: string, ordinal: number, more: Record<string, unknown> = {}) => ({
      status_key: statusKey,
      awb,
      code: "FOH",
      mapped: false,
      reason: "no milestone",
      format: "FSU",
      source_line: 2,
      source_element: null,
      source_text: `FOH/${statusKey}`,
      occurred_at: null,
      time_basis: null,
      station: "FRA",
      flight: null,
      flight_date: null,
      carrier_code: null,
      discrepancy: null,
      toa_timestamp: null,
      shipment: "T",
      pieces: 3,
      weight: 12.5,
      weight_unit: "K",
      total_pieces: 3,
      ordinal,
      ...more,
    });
    const record = (records: object[], receivedAt = new Date()) =>
      recordCarrierStatuses.rows(db.prisma, {
        records: JSON.stringify(records),
        receivedAt: receivedAt.toISOString(),
      });

    it("record-carrier-statuses records the statuses whose key is new, the first of repeats in the call, every column as given, and answers those in the order given", async () => {
      const a = fx.awb();
      expect((await record([status("fsu:1", a, 0)])).map((r) => r.status_key)).toEqual(["fsu:1"]);
      const receivedAt = new Date(Date.parse("2026-03-04T05:06:07.890Z"));
      const added = await record(
        [
          status("fsu:1", a, 0), // recorded already
          status("fsu:2", a, 1, { occurred_at: "2026-03-04T01:00:00.000Z", weight: 7.25 }),
          status("fsu:2", a, 2, { code: "RCS" }), // a repeat within the call
          status("fsu:3", a, 3, { pieces: null, weight: null, mapped: true, reason: null, code: "DEP" }),
        ],
        receivedAt,
      );
      const second = await db.prisma.carrierStatus.findUniqueOrThrow({ where: { statusKey: "fsu:2" } });
      const third = await db.prisma.carrierStatus.findUniqueOrThrow({ where: { statusKey: "fsu:3" } });
      // Only what this call recorded, the first of its repeats, with the ids the rows got.
      expect(added).toEqual([
        { id: second.id, status_key: "fsu:2", awb: a, code: "FOH", mapped: false },
        { id: third.id, status_key: "fsu:3", awb: a, code: "DEP", mapped: true },
      ]);
      // Answered in the order given, whatever the keys' order.
      expect((await record([status("fsu:9", a, 0), status("fsu:10", a, 1)])).map((r) => r.status_key)).toEqual([
        "fsu:9",
        "fsu:10",
      ]);
      expect(second).toMatchObject({
        code: "FOH",
        weight: 7.25,
        pieces: 3,
        sourceLine: 2,
        sourceElement: null,
        sourceText: "FOH/fsu:2",
        occurredAt: new Date("2026-03-04T01:00:00.000Z"),
        receivedAt,
        ordinal: 1,
        weightUnit: "K",
        totalPieces: 3,
      });
      expect(await db.prisma.carrierStatus.findUniqueOrThrow({ where: { statusKey: "fsu:3" } })).toMatchObject({
        pieces: null,
        weight: null,
        mapped: true,
        reason: null,
      });
    });

    it("carrier-statuses-of answers an AWB's statuses in the order they happened, then stored, linked to their milestone when mapped", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      const receivedAt = new Date(Date.parse("2026-03-04T12:00:00.000Z"));
      await record(
        [
          status("fsu:late", a, 0, {
            occurred_at: "2026-03-04T10:00:00.000Z",
            mapped: true,
            code: "DEP",
            reason: null,
          }),
          status("fsu:early", a, 1, { occurred_at: "2026-03-04T09:00:00.000Z" }),
          status("fsu:untimed-2", a, 3),
          status("fsu:untimed-1", a, 2),
          status("fsu:other", b, 0),
        ],
        receivedAt,
      );
      const milestone = await db.prisma.statusEvent.create({
        data: { dedupeKey: "id:fsu:late", awb: a, state: "DEP", occurredAt: new Date(), position: 1 },
      });
      await db.prisma.statusEvent.create({
        data: { dedupeKey: "id:fsu:early", awb: b, state: "FOH", occurredAt: new Date(), position: 1 },
      });
      const rows = await carrierStatusesOf.rows(db.prisma, { awb: a });
      expect(rows.map((row) => [row.status_key, row.milestone_id])).toEqual([
        ["fsu:early", null],
        ["fsu:late", milestone.id],
        ["fsu:untimed-1", null],
        ["fsu:untimed-2", null],
      ]);
      expect(rows[0]).toMatchObject({ received_at: receivedAt, weight: 12.5, pieces: 3, format: "FSU", awb: a });
    });

    it("subscriptions-of-awbs answers the AWBs' legacy subscriptions that take events now, and the ONE Record ones of the topics", async () => {
      const [a, b] = [fx.awb(), fx.awb()];
      const client = await fx.client();
      const receivedAt = new Date();
      const live = await fx.subscription(client, { awb: a, callback: "http://r.test/a" });
      await fx.subscription(client, { awb: a, expiresAt: new Date(receivedAt.getTime() - 1) });
      await fx.subscription(client, { awb: a, disabledAt: new Date() });
      await fx.subscription(client, { awb: b });
      const later = await fx.subscription(client, { awb: a, expiresAt: new Date(receivedAt.getTime() + 60_000) });
      const oneRecord = (fields: { topicType: string; topic: string; status?: string; eventTypes?: string[] }) =>
        db.prisma.oneRecordSubscription.create({
          data: {
            status: fields.status ?? "REQUEST_ACCEPTED",
            initiatedBy: "SUBSCRIBER",
            requestedBy: "organization-x",
            subscription: {},
            subscriber: "organization-x",
            topicType: fields.topicType,
            topic: fields.topic,
            eventTypes: fields.eventTypes ?? ["LOGISTICS_EVENT_RECEIVED"],
            endpoint: "http://s.test/notifications",
            origin: "http://s.test:80",
            sendBody: true,
          },
        });
      const byId = await oneRecord({ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic: `shipment-${a}` });
      const byType = await oneRecord({ topicType: "LOGISTICS_OBJECT_TYPE", topic: "cargo:Shipment" });
      await oneRecord({ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic: `shipment-${a}`, status: "REQUEST_REVOKED" });
      await oneRecord({
        topicType: "LOGISTICS_OBJECT_TYPE",
        topic: "cargo:Shipment",
        eventTypes: ["LOGISTICS_OBJECT_CREATED"],
      });
      const params = {
        awbs: [a],
        receivedAt: receivedAt.toISOString(),
        objectIds: [`shipment-${a}`],
        classes: ["cargo:Shipment"],
        eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      };
      const rows = await subscriptionsOfAwbs.rows(db.prisma, params);
      expect(rows.map((r) => [r.kind, r.id]).sort()).toEqual(
        [
          ["ONE_RECORD", byId.id],
          ["ONE_RECORD", byType.id],
          ["WEBHOOK", live],
          ["WEBHOOK", later],
        ].sort(),
      );
      expect(rows.find((r) => r.id === live)).toEqual({
        kind: "WEBHOOK",
        id: live,
        client_id: client,
        target: "http://r.test/a",
        list: ["*"],
        topic: a,
        topic_type: null,
        send_body: false,
      });
      expect(rows.find((r) => r.id === byId.id)).toEqual({
        kind: "ONE_RECORD",
        id: byId.id,
        client_id: null,
        target: "http://s.test/notifications",
        list: ["LOGISTICS_EVENT_RECEIVED"],
        topic: `shipment-${a}`,
        topic_type: "LOGISTICS_OBJECT_IDENTIFIER",
        send_body: true,
      });
      // Without ONE Record topics (no producer wired), the legacy subscriptions alone.
      const legacyOnly = await subscriptionsOfAwbs.rows(db.prisma, {
        ...params,
        objectIds: [],
        classes: [],
        eventTypes: [],
      });
      expect(legacyOnly.map((r) => r.kind)).toEqual(["WEBHOOK", "WEBHOOK"]);
    });
  });
});
