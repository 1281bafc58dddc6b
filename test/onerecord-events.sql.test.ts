import { randomUUID } from "node:crypto";
import type { Database } from "../src/db/database";
import { DEFAULT_EVENT_SORT, type EventListQuery } from "../src/onerecord/events/event-query";
import { createEventStore, type EventOwner, type EventStore } from "../src/onerecord/events/events.store";
import { STATUS_CODE_PREFIX } from "../src/onerecord/events/status-codes";
import { logisticsEventById } from "../src/onerecord/sql/logistics-event-by-id.sql";
import { insertLogisticsEvent } from "../src/onerecord/sql/logistics-event-insert.sql";
import { logisticsEventsPage } from "../src/onerecord/sql/logistics-events-page.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyTables, fixtures, openTestDatabase } from "./support/test-database";

const at = (iso: string) => new Date(iso);
const query = (overrides: Partial<EventListQuery> = {}): EventListQuery => ({
  codes: null,
  createdAfter: null,
  createdBefore: null,
  occurredAfter: null,
  occurredBefore: null,
  sort: DEFAULT_EVENT_SORT,
  limit: 1_000,
  skip: 0,
  ...overrides,
});

/** Each statement of onerecord/sql/ about logistics events, on its own, on both databases. */
describe.each(BACKENDS)("logistics event statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let fx: ReturnType<typeof fixtures>;
    let store: EventStore;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
      store = createEventStore(db.sql);
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(async () => {
      await emptyTables(db);
      await db.sql.query("TRUNCATE logistics_event", []);
    });

    let position = 0;
    const milestone = async (
      awb: string,
      fields: {
        state: string;
        occurredAt: string;
        receivedAt: string;
        dedupeKey?: string;
        toa?: string;
        flight?: string;
      },
    ) =>
      (
        await db.prisma.statusEvent.create({
          data: {
            dedupeKey: fields.dedupeKey ?? `key-${randomUUID()}`,
            awb,
            state: fields.state,
            occurredAt: at(fields.occurredAt),
            receivedAt: at(fields.receivedAt),
            toaTimestamp: fields.toa ? at(fields.toa) : null,
            station: "FRA",
            flight: fields.flight ?? null,
            position: ++position,
          },
        })
      ).id;
    const carrierStatus = async (
      awb: string,
      fields: {
        key: string;
        code: string;
        mapped: boolean;
        receivedAt: string;
        occurredAt?: string;
        discrepancy?: string;
      },
    ) =>
      (
        await db.prisma.carrierStatus.create({
          data: {
            statusKey: fields.key,
            awb,
            code: fields.code,
            mapped: fields.mapped,
            reason: fields.mapped ? null : "not a milestone",
            format: "FSU",
            sourceText: `${fields.code}/…`,
            occurredAt: fields.occurredAt ? at(fields.occurredAt) : null,
            station: "FRA",
            flightDate: "2026-10-16",
            discrepancy: fields.discrepancy ?? null,
            shipment: "P",
            pieces: 4,
            weight: 200,
            weightUnit: "K",
            receivedAt: at(fields.receivedAt),
            ordinal: 0,
          },
        })
      ).id;
    const posted = async (
      objectId: string,
      fields: { id?: string; code: string | null; eventDate: string; creationDate: string },
    ) => {
      const id = fields.id ?? randomUUID();
      await store.insert({
        objectId,
        id,
        eventCode: fields.code,
        eventDate: at(fields.eventDate),
        creationDate: at(fields.creationDate),
        body: { "@type": "cargo:LogisticsEvent", "cargo:eventName": `posted ${id}` },
        createdBy: "organization-x",
      });
      return id;
    };

    /** An AWB with one of each kind of event, and another AWB's milestone that must not show. */
    async function shipmentWithEveryKind() {
      const awb = fx.awb();
      const owner: EventOwner = { objectId: `shipment-${awb}`, awb };
      const json = await milestone(awb, {
        state: "RCS",
        occurredAt: "2026-10-15T10:00:00Z",
        receivedAt: "2026-10-15T10:01:00Z",
      });
      await carrierStatus(awb, {
        key: `fsu:${awb}:dep`,
        code: "DEP",
        mapped: true,
        receivedAt: "2026-10-16T16:00:00Z",
      });
      const fsu = await milestone(awb, {
        state: "DEP",
        dedupeKey: `id:fsu:${awb}:dep`,
        occurredAt: "2026-10-16T15:45:00Z",
        receivedAt: "2026-10-16T16:00:00Z",
        flight: "LH400",
      });
      await carrierStatus(awb, {
        key: `fsu:${awb}:dis`,
        code: "DIS",
        mapped: true,
        receivedAt: "2026-10-17T09:00:00Z",
        discrepancy: "MSCA",
      });
      const dis = await milestone(awb, {
        state: "DIS",
        dedupeKey: `id:fsu:${awb}:dis`,
        occurredAt: "2026-10-17T08:00:00Z",
        receivedAt: "2026-10-17T09:00:00Z",
      });
      const toa = await milestone(awb, {
        state: "TOA",
        occurredAt: "2026-10-16T17:00:00Z",
        receivedAt: "2026-10-16T17:00:01Z",
        toa: "2026-10-17T05:30:00Z",
      });
      const foh = await carrierStatus(awb, {
        key: `fsu:${awb}:foh`,
        code: "FOH",
        mapped: false,
        receivedAt: "2026-10-15T09:00:00Z",
      });
      await carrierStatus(awb, {
        key: `fsu:${awb}:ssr`,
        code: "SSR",
        mapped: false,
        receivedAt: "2026-10-15T09:00:00Z",
      });
      const bkd = await posted(owner.objectId, {
        code: `${STATUS_CODE_PREFIX}BKD`,
        eventDate: "2026-10-14T12:00:00Z",
        creationDate: "2026-10-18T12:00:00Z",
      });
      // A milestone posted through ONE Record: its body kept under the milestone's id, listed once.
      const twin = await milestone(awb, {
        state: "ARR",
        occurredAt: "2026-10-17T06:00:00Z",
        receivedAt: "2026-10-17T06:10:00Z",
      });
      await posted(owner.objectId, {
        id: twin,
        code: `${STATUS_CODE_PREFIX}ARR`,
        eventDate: "2026-10-17T06:00:00Z",
        creationDate: "2026-10-17T06:10:00Z",
      });
      await milestone(fx.awb(), {
        state: "DLV",
        occurredAt: "2026-10-19T10:00:00Z",
        receivedAt: "2026-10-19T10:00:00Z",
      });
      return { awb, owner, ids: { json, fsu, dis, toa, foh, bkd, twin } };
    }

    it("logistics-events-page lists a Shipment's milestones (with their carrier status), other carrier statuses with a StatusCode, and posted events", async () => {
      const { owner, ids } = await shipmentWithEveryKind();
      const page = await store.page(owner, query());
      expect(page.rows.map((r) => [r.kind, r.id])).toEqual([
        ["status", ids.foh],
        ["milestone", ids.json],
        ["milestone", ids.fsu],
        ["milestone", ids.toa],
        ["milestone", ids.twin],
        ["milestone", ids.dis],
        ["posted", ids.bkd],
      ]);
      expect({ total: page.total, all: page.allCount, last: page.lastModified }).toEqual({
        total: 7,
        all: 7,
        last: at("2026-10-18T12:00:00Z"),
      });
      const byId = new Map(page.rows.map((r) => [r.id, r]));
      expect(byId.get(ids.fsu)).toMatchObject({
        code: "DEP",
        flight: "LH400",
        shipment: "P",
        pieces: 4,
        weight: 200,
        weight_unit: "K",
        body: null,
      });
      expect(byId.get(ids.dis)).toMatchObject({ code: "DIS", discrepancy: "MSCA" });
      expect(byId.get(ids.toa)).toMatchObject({
        event_date: at("2026-10-17T05:30:00Z"),
        occurred_at: at("2026-10-16T17:00:00Z"),
      });
      expect(byId.get(ids.foh)).toMatchObject({ code: "FOH", event_date: at("2026-10-15T09:00:00Z"), pieces: 4 });
      expect(byId.get(ids.twin)!.body).toMatchObject({ "cargo:eventName": `posted ${ids.twin}` });
      expect(byId.get(ids.bkd)).toMatchObject({ code: null, event_date: at("2026-10-14T12:00:00Z") });
      expect(byId.get(ids.json)).toMatchObject({ shipment: null, pieces: null, body: null });
    });

    it("filters by codes contained in the event code's IRI (DIS_ matched as written), and by strict time bounds", async () => {
      const { owner, ids } = await shipmentWithEveryKind();
      const idsOf = async (q: Partial<EventListQuery>) => (await store.page(owner, query(q))).rows.map((r) => r.id);
      expect(await idsOf({ codes: ["DEP"] })).toEqual([ids.fsu]);
      expect(await idsOf({ codes: ["ARR"] })).toEqual([ids.toa, ids.twin]); // a TOA is an expected ARR
      expect(await idsOf({ codes: ["DIS_", "BKD"] })).toEqual([ids.dis, ids.bkd]);
      expect(await idsOf({ codes: ["DIS_M_CA"] })).toEqual([]); // "_" is no wildcard
      expect(await idsOf({ codes: [`${STATUS_CODE_PREFIX}FOH`] })).toEqual([ids.foh]);
      expect(await idsOf({ createdAfter: at("2026-10-17T06:10:00Z") })).toEqual([ids.dis, ids.bkd]);
      expect(await idsOf({ createdBefore: at("2026-10-15T10:01:00Z") })).toEqual([ids.foh]);
      expect(
        await idsOf({ occurredAfter: at("2026-10-17T05:30:00Z"), occurredBefore: at("2026-10-17T08:00:00Z") }),
      ).toEqual([ids.twin]);
    });

    it("sorts by either date both ways, pages with limit and skip, and counts the matches on an empty page", async () => {
      const { owner, ids } = await shipmentWithEveryKind();
      const idsOf = async (q: Partial<EventListQuery>) => (await store.page(owner, query(q))).rows.map((r) => r.id);
      const byEventDate = [ids.bkd, ids.json, ids.fsu, ids.toa, ids.twin, ids.dis];
      expect((await idsOf({ sort: "ASC-eventDate" })).filter((id) => id !== ids.foh)).toEqual(byEventDate);
      expect(await idsOf({ sort: "DESC-eventDate" })).toEqual([...(await idsOf({ sort: "ASC-eventDate" }))].reverse());
      expect(await idsOf({ sort: "DESC-creationDate" })).toEqual([...(await idsOf({}))].reverse());
      expect(await idsOf({ limit: 2, skip: 1 })).toEqual([ids.json, ids.fsu]);
      const beyond = await store.page(owner, query({ skip: 50 }));
      expect({ rows: beyond.rows, total: beyond.total, all: beyond.allCount }).toEqual({ rows: [], total: 7, all: 7 });
      const none = await store.page({ objectId: randomUUID(), awb: null }, query());
      expect({ rows: none.rows, total: none.total, last: none.lastModified }).toEqual({
        rows: [],
        total: 0,
        last: null,
      });
    });

    it("logistics-event-by-id answers one event of the object, of any kind, and nothing for another object's", async () => {
      const { owner, ids } = await shipmentWithEveryKind();
      for (const [kind, id] of [
        ["milestone", ids.fsu],
        ["status", ids.foh],
        ["posted", ids.bkd],
        ["milestone", ids.twin],
      ] as const)
        expect(await store.byId(owner, id)).toMatchObject({ kind, id });
      const other = await shipmentWithEveryKind();
      expect(await store.byId(owner, other.ids.fsu)).toBeUndefined();
      expect(await store.byId({ objectId: owner.objectId, awb: null }, ids.fsu)).toBeUndefined();
      expect(await store.byId(owner, randomUUID())).toBeUndefined();
      expect(logisticsEventById.name).toBe("onerecord/logistics-event-by-id");
    });

    it("logistics-event-insert stores an event once per object and id", async () => {
      const event = {
        objectId: randomUUID(),
        id: randomUUID(),
        eventCode: null,
        eventDate: at("2026-10-14T12:00:00Z"),
        creationDate: at("2026-10-14T12:00:01Z"),
        body: { "@type": "cargo:LogisticsEvent" },
        createdBy: "organization-x",
      };
      expect(await store.insert(event)).toBe(true);
      expect(await store.insert({ ...event, body: { changed: true } })).toBe(false);
      expect(await store.insert({ ...event, objectId: randomUUID() })).toBe(true);
      const [row] = await db.sql.query<{ body: unknown; event_date: Date }>(
        "SELECT body, event_date FROM logistics_event WHERE object_id = $1",
        [event.objectId],
      );
      expect(row).toEqual({ body: { "@type": "cargo:LogisticsEvent" }, event_date: event.eventDate });
      expect([insertLogisticsEvent.name, logisticsEventsPage.name]).toEqual([
        "onerecord/logistics-event-insert",
        "onerecord/logistics-events-page",
      ]);
    });
  });
});
