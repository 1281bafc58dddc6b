import { randomUUID } from "node:crypto";
import type { Database } from "../../src/db/database";
import {
  actionRequestsOfObject,
  MAX_AUDIT_TRAIL_BYTES,
  MAX_AUDIT_TRAIL_OPERATIONS,
} from "../../src/onerecord/sql/action-requests-of-object.sql";
import { countPendingActionRequests } from "../../src/onerecord/sql/action-requests-pending-count.sql";
import { supersedeActionRequests } from "../../src/onerecord/sql/action-requests-supersede.sql";
import { decideActionRequest } from "../../src/onerecord/sql/action-request-decide.sql";
import { insertActionRequest } from "../../src/onerecord/sql/action-request-insert.sql";
import { spendQuotaAlone } from "../../src/onerecord/sql/quota-spend-alone.sql";
import { MAX_CHANGE_OPERATIONS, MAX_CHANGE_REQUEST_BYTES } from "../../src/onerecord/objects/change-bounds";
import { readActionRequest } from "../../src/onerecord/sql/action-request-read.sql";
import { ensureAwbObjects } from "../../src/onerecord/sql/awb-objects-ensure.sql";
import { insertObject } from "../../src/onerecord/sql/object-insert.sql";
import { readObject } from "../../src/onerecord/sql/object-read.sql";
import { objectRevisionAt } from "../../src/onerecord/sql/object-revision-at.sql";
import { writeObjectRevision } from "../../src/onerecord/sql/object-write-revision.sql";
import { BACKENDS, describeBackend, Disposers } from "../support/harness";
import { fixtures, openTestDatabase } from "../support/test-database";

const PIECE = "https://onerecord.iata.org/ns/cargo#Piece";
const body = (description: string) => JSON.stringify({ "@type": [PIECE], description: [{ "@value": description }] });

/** Each statement of onerecord/sql/ about objects and action requests on its own, on both databases. */
/** A daily quota no test here reaches, for the statements that spend one. */
const ROOMY_QUOTA = { quota: "test", maxCount: 1_000_000, maxBytes: 1e12 };

describe.each(BACKENDS)("ONE Record object statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let fx: ReturnType<typeof fixtures>;
    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      fx = fixtures(db);
    });
    afterAll(() => disposers.disposeAll());

    const newObject = async (id = randomUUID(), description = "first") => {
      const [row] = await insertObject.rows(db.prisma, {
        id,
        type: PIECE,
        types: [PIECE],
        body: body(description),
        awb: null,
        createdBy: "organization-a",
      });
      return row!;
    };
    const revisions = (id: string) =>
      db.prisma.logisticsObjectRevision.findMany({ where: { objectId: id }, orderBy: { revision: "asc" } });

    it("object-insert writes revision 1 with its row, and nothing when the id is taken", async () => {
      const row = await newObject();
      expect(row).toMatchObject({ type: PIECE, types: [PIECE], revision: 1, created_by: "organization-a", awb: null });
      expect(row.body).toEqual(JSON.parse(body("first")));
      expect(row.last_modified).toBeInstanceOf(Date);
      expect(await revisions(row.id)).toEqual([expect.objectContaining({ revision: 1, actionRequestId: null })]);
      const again = await insertObject.rows(db.prisma, {
        id: row.id,
        type: PIECE,
        types: [PIECE],
        body: body("second"),
        awb: null,
        createdBy: "organization-b",
      });
      expect(again).toEqual([]);
      expect((await readObject.rows(db.prisma, { id: row.id }))[0]).toMatchObject({ created_by: "organization-a" });
      expect(await revisions(row.id)).toHaveLength(1);
    });

    it("object-read answers the latest state with the Organizations granted read access", async () => {
      const row = await newObject();
      expect((await readObject.rows(db.prisma, { id: row.id }))[0]).toMatchObject({ id: row.id, readers: [] });
      await db.prisma.logisticsObjectGrant.create({
        data: { objectId: row.id, organizationId: "organization-b", grantedBy: "organization-a" },
      });
      expect((await readObject.rows(db.prisma, { id: row.id }))[0]!.readers).toEqual(["organization-b"]);
      expect(await readObject.rows(db.prisma, { id: "no-such-object" })).toEqual([]);
    });

    it("object-write-revision writes the next revision only onto the revision it was computed from", async () => {
      const row = await newObject();
      const requestId = randomUUID();
      const written = await writeObjectRevision.rows(db.prisma, {
        id: row.id,
        revision: 1,
        type: PIECE,
        types: [PIECE],
        body: body("second"),
        actionRequestId: requestId,
      });
      expect(written).toEqual([{ revision: 2, last_modified: expect.any(Date) }]);
      const stale = await writeObjectRevision.rows(db.prisma, {
        id: row.id,
        revision: 1,
        type: PIECE,
        types: [PIECE],
        body: body("lost"),
        actionRequestId: null,
      });
      expect(stale).toEqual([]);
      const latest = (await readObject.rows(db.prisma, { id: row.id }))[0]!;
      expect([latest.revision, latest.body]).toEqual([2, JSON.parse(body("second"))]);
      expect((await revisions(row.id)).map((r) => [r.revision, r.actionRequestId])).toEqual([
        [1, null],
        [2, requestId],
      ]);
    });

    it("object-revision-at answers the last revision written by a time, none before the first", async () => {
      const row = await newObject();
      await db.prisma.logisticsObjectRevision.update({
        where: { objectId_revision: { objectId: row.id, revision: 1 } },
        data: { modifiedAt: new Date("2026-01-01T00:00:00Z") },
      });
      await writeObjectRevision.rows(db.prisma, {
        id: row.id,
        revision: 1,
        type: PIECE,
        types: [PIECE],
        body: body("second"),
        actionRequestId: null,
      });
      const at = (iso: string) => objectRevisionAt.rows(db.prisma, { id: row.id, at: new Date(iso) });
      expect(await at("2025-12-31T23:59:59Z")).toEqual([]);
      expect((await at("2026-01-01T00:00:00Z"))[0]).toMatchObject({ revision: 1, body: JSON.parse(body("first")) });
      expect((await objectRevisionAt.rows(db.prisma, { id: row.id, at: new Date() }))[0]).toMatchObject({
        revision: 2,
      });
    });

    it("awb-objects-ensure writes an AWB's two skeletons once the AWB is known, and only once", async () => {
      const awb = fx.awb();
      const params = {
        awb,
        createdBy: "organization-carrier",
        waybillId: `waybill-${awb}`,
        waybillType: "https://onerecord.iata.org/ns/cargo#Waybill",
        waybillBody: JSON.stringify({ "@id": `waybill-${awb}` }),
        shipmentId: `shipment-${awb}`,
        shipmentType: "https://onerecord.iata.org/ns/cargo#Shipment",
        shipmentBody: JSON.stringify({ "@id": `shipment-${awb}` }),
      };
      expect(await ensureAwbObjects.rows(db.prisma, params)).toEqual([{ known: false, created: [] }]);
      expect(await db.prisma.logisticsObject.count({ where: { awb } })).toBe(0);
      await fx.event(awb);
      expect(await ensureAwbObjects.rows(db.prisma, params)).toEqual([
        { known: true, created: [`shipment-${awb}`, `waybill-${awb}`] },
      ]);
      expect(await ensureAwbObjects.rows(db.prisma, { ...params, waybillBody: "{}" })).toEqual([
        { known: true, created: [] },
      ]);
      const rows = await db.prisma.logisticsObject.findMany({ where: { awb }, orderBy: { id: "asc" } });
      expect(rows.map((r) => [r.id, r.revision, r.createdBy, r.body])).toEqual([
        [`shipment-${awb}`, 1, "organization-carrier", { "@id": `shipment-${awb}` }],
        [`waybill-${awb}`, 1, "organization-carrier", { "@id": `waybill-${awb}` }],
      ]);
      expect(
        await db.prisma.logisticsObjectRevision.count({ where: { objectId: { in: rows.map((r) => r.id) } } }),
      ).toBe(2);
    });

    it("awb-objects-ensure knows an AWB from a carrier status alone", async () => {
      const awb = fx.awb();
      await db.prisma.carrierStatus.create({
        data: {
          statusKey: `key-${awb}`,
          awb,
          ordinal: 1,
          code: "FOH",
          mapped: false,
          format: "FSU",
          sourceText: "FSU/13",
          receivedAt: new Date(),
        },
      });
      const [row] = await ensureAwbObjects.rows(db.prisma, {
        awb,
        createdBy: "organization-carrier",
        waybillId: `waybill-${awb}`,
        waybillType: "W",
        waybillBody: "{}",
        shipmentId: `shipment-${awb}`,
        shipmentType: "S",
        shipmentBody: "{}",
      });
      expect(row).toEqual({ known: true, created: [`shipment-${awb}`, `waybill-${awb}`] });
    });

    it("action-requests-pending-count counts one requester's pending requests on one object", async () => {
      const object = await newObject();
      const other = await newObject();
      const ask = async (objectId: string, requestedBy: string) =>
        (
          await insertActionRequest.rows(db.prisma, {
            ...ROOMY_QUOTA,
            id: randomUUID(),
            kind: "CHANGE_REQUEST",
            objectId,
            request: "{}",
            requestedBy,
            revision: 1,
            operations: 1,
            bytes: 2,
          })
        )[0]!;
      const count = async (objectId: string, requestedBy: string) =>
        (await countPendingActionRequests.rows(db.prisma, { objectId, requestedBy }))[0]!.pending;
      expect(await count(object.id, "organization-a")).toBe(0);
      await ask(object.id, "organization-a");
      const decided = await ask(object.id, "organization-a");
      await ask(object.id, "organization-b");
      await ask(other.id, "organization-a");
      expect(await count(object.id, "organization-a")).toBe(2);
      await decideActionRequest.rows(db.prisma, {
        id: decided.id,
        status: "REQUEST_REVOKED",
        decidedBy: "organization-a",
        reason: null,
        errorStatus: null,
      });
      expect(await count(object.id, "organization-a")).toBe(1);
    });

    it("action-request insert, read, decide (once), supersede and list for the audit trail", async () => {
      const object = await newObject();
      const request = (revision: number) =>
        insertActionRequest.rows(db.prisma, {
          ...ROOMY_QUOTA,
          id: randomUUID(),
          kind: "CHANGE_REQUEST",
          objectId: object.id,
          request: JSON.stringify({ "@type": ["Change"] }),
          requestedBy: "organization-b",
          revision,
          operations: 1,
          bytes: 20,
        });
      const [first] = await request(1);
      const [second] = await request(1);
      const [third] = await request(2);
      // Asked a second apart, as the audit trail orders them by when they were asked.
      for (const [i, row] of [first!, second!, third!].entries())
        await db.prisma.actionRequest.update({
          where: { id: row.id },
          data: { requestedAt: new Date(Date.now() - (3 - i) * 1_000) },
        });
      expect(first).toMatchObject({ status: "REQUEST_PENDING", revision: 1, decided_at: null, error_status: null });
      expect((await readActionRequest.rows(db.prisma, { id: first!.id }))[0]).toEqual({
        ...first,
        requested_at: expect.any(Date),
      });

      const decide = (id: string, status: string) =>
        decideActionRequest.rows(db.prisma, {
          id,
          status,
          decidedBy: "organization-a",
          reason: null,
          errorStatus: null,
        });
      expect((await decide(first!.id, "REQUEST_ACCEPTED"))[0]).toMatchObject({
        status: "REQUEST_ACCEPTED",
        decided_by: "organization-a",
        decided_at: expect.any(Date),
      });
      expect(await decide(first!.id, "REQUEST_REJECTED")).toEqual([]);

      const superseded = await supersedeActionRequests.rows(db.prisma, {
        objectId: object.id,
        revision: 1,
        acceptedId: first!.id,
        decidedBy: "organization-a",
        reason: "superseded",
      });
      expect(superseded.map((r) => [r.id, r.status])).toEqual([[second!.id, "REQUEST_REJECTED"]]);
      expect((await readActionRequest.rows(db.prisma, { id: second!.id }))[0]).toMatchObject({
        status: "REQUEST_REJECTED",
        reason: "superseded",
        error_status: 409,
      });
      expect((await readActionRequest.rows(db.prisma, { id: third!.id }))[0]).toMatchObject({
        status: "REQUEST_PENDING",
      });

      const list = (filter: { from?: Date; to?: Date; statuses?: string[] }) =>
        actionRequestsOfObject.rows(db.prisma, {
          objectId: object.id,
          from: filter.from ?? null,
          to: filter.to ?? null,
          statuses: filter.statuses ?? null,
        });
      expect((await list({})).map((r) => r.id)).toEqual([first!.id, second!.id, third!.id]);
      expect((await list({ statuses: ["REQUEST_PENDING"] })).map((r) => r.id)).toEqual([third!.id]);
      expect(await list({ from: new Date(Date.now() + 60_000) })).toEqual([]);
      expect(await list({ to: new Date(Date.now() - 60_000) })).toEqual([]);
      expect(await readActionRequest.rows(db.prisma, { id: randomUUID() })).toEqual([]);
    });

    it("action-request insert stores a request only while its requester's daily quota takes it, counts and bytes", async () => {
      const object = await newObject();
      const insert = (requestedBy: string, request: string, quota = { maxCount: 3, maxBytes: 100 }) =>
        insertActionRequest.rows(db.prisma, {
          id: randomUUID(),
          kind: "CHANGE_REQUEST",
          objectId: object.id,
          request,
          requestedBy,
          revision: 1,
          operations: 1,
          bytes: request.length,
          quota: "change_requests",
          ...quota,
        });
      const small = JSON.stringify({ a: 1 });
      for (let i = 0; i < 3; i++) expect(await insert("organization-q", small)).toHaveLength(1);
      expect(await insert("organization-q", small)).toEqual([]);
      // Another requester's quota is its own; bytes count as well as requests.
      expect(await insert("organization-r", JSON.stringify({ text: "x".repeat(60) }))).toHaveLength(1);
      expect(await insert("organization-r", JSON.stringify({ text: "x".repeat(60) }))).toEqual([]);
      const stored = await db.prisma.actionRequest.count({ where: { objectId: object.id } });
      expect(stored).toBe(4);
      // A new UTC day starts the counts again.
      await db.prisma.$executeRawUnsafe("UPDATE quota_usage SET day = day - 1 WHERE subject = 'organization-q'");
      expect(await insert("organization-q", small)).toHaveLength(1);
    });

    it("quota-spend-alone spends a caller's daily quota on its own, nothing past its count or bytes", async () => {
      const spend = (subject: string, bytes: number) =>
        spendQuotaAlone.rows(db.prisma, { quota: "logistics_objects", subject, bytes, maxCount: 2, maxBytes: 100 });
      expect(await spend("organization-s", 10)).toHaveLength(1);
      expect(await spend("organization-s", 10)).toHaveLength(1);
      expect(await spend("organization-s", 10)).toEqual([]);
      expect(await spend("organization-t", 90)).toHaveLength(1);
      expect(await spend("organization-t", 20)).toEqual([]);
    });

    it("lists for the audit trail the latest requests within its operations and bytes, none over a request's bounds", async () => {
      const object = await newObject();
      const asked = async (operations: number, bytes: number, secondsAgo: number) => {
        const [row] = await insertActionRequest.rows(db.prisma, {
          ...ROOMY_QUOTA,
          id: randomUUID(),
          kind: "CHANGE_REQUEST",
          objectId: object.id,
          request: "{}",
          requestedBy: "organization-b",
          revision: 1,
          operations,
          bytes,
        });
        await db.prisma.actionRequest.update({
          where: { id: row!.id },
          data: { requestedAt: new Date(Date.now() - secondsAgo * 1_000) },
        });
        return row!.id;
      };
      const list = async () =>
        (
          await actionRequestsOfObject.rows(db.prisma, { objectId: object.id, from: null, to: null, statuses: null })
        ).map((r) => r.id);
      const perRequest = MAX_AUDIT_TRAIL_OPERATIONS / 4;
      const ids = [];
      for (let i = 0; i < 6; i++) ids.push(await asked(perRequest, 10, 60 - i));
      // The latest four fill the operations; the two before them are left out, oldest first.
      expect(await list()).toEqual(ids.slice(2));
      // A newer request over one request's bounds is not listed, and takes no room.
      await asked(MAX_CHANGE_OPERATIONS + 1, 10, 1);
      await asked(1, MAX_CHANGE_REQUEST_BYTES + 1, 1);
      expect(await list()).toEqual(ids.slice(2));
      // Bytes: four of the largest a request may be fill the budget; nothing older has room.
      const large = [];
      for (let i = 0; i < MAX_AUDIT_TRAIL_BYTES / MAX_CHANGE_REQUEST_BYTES; i++)
        large.push(await asked(1, MAX_CHANGE_REQUEST_BYTES, 0.5 - i * 0.1));
      expect(await list()).toEqual(large);
    });
  });
});
