import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import { MAX_CHANGE_OPERATIONS, MAX_CHANGE_REQUEST_BYTES } from "../../src/onerecord/objects/change-bounds";
import {
  MAX_AUDIT_TRAIL_BYTES,
  MAX_AUDIT_TRAIL_OPERATIONS,
} from "../../src/onerecord/sql/action-requests-of-object.sql";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";
import { expectVictimServed, watchAsVictim } from "../support/victim";
import { API, CARGO, XSD } from "../support/onerecord-vocabulary";

/**
 * What one caller with a read-only key can make the gateway store and answer through change requests
 * (docs/ONE-RECORD.md "Action requests", "Quotas"): a Change is bounded in operations and bytes, each
 * stored one spends its Organization's daily quota, and an audit trail answers within its budgets
 * while every other caller is still answered.
 */
const AWB = "020-12345675";
/** The quotas this gateway runs with: small, so a test reaches them. */
const PER_DAY = 12;
const BYTES_PER_DAY = 1_200_000;

/** An api:Change of `uri` at `revision`: `operations` operations, each with `objects` api:o values of `value`. */
function change(uri: string, { revision = 999, operations = 1, objects = 1, value = "x" } = {}) {
  return {
    "@context": { cargo: CARGO, api: API, xsd: XSD },
    "@type": "api:Change",
    "api:hasLogisticsObject": { "@id": uri },
    "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": String(revision) },
    "api:hasOperation": Array.from({ length: operations }, (_, i) => ({
      "@type": "api:Operation",
      "api:op": { "@id": "api:ADD" },
      "api:s": uri,
      "api:p": `${CARGO}goodsDescription`,
      "api:o":
        objects === 1
          ? { "@type": "api:OperationObject", "api:hasDatatype": `${XSD}string`, "api:hasValue": `${i}${value}` }
          : Array.from({ length: objects }, (_, j) => `v${i}-${j}`),
    })),
  };
}

/**
 * A ONE Record request without the conformance check `oneRecord` makes of each answer: that check runs
 * in this process, beside the gateway, and would be counted as the gateway's stall.
 */
async function plain(url: string, token: string, { method = "GET", body }: { method?: string; body?: unknown } = {}) {
  const res = await fetch(url, {
    method,
    headers: {
      accept: "application/ld+json",
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { "content-type": "application/ld+json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: JSON.parse(text) as Record<string, any> };
}

const messageOf = (answer: Pick<OneRecordAnswer, "body">): string => {
  const details = answer.body["api:hasErrorDetail"];
  return (Array.isArray(details) ? details[0] : details)["api:hasMessage"] as string;
};

describe.each(BEHAVIOUR_BACKENDS)("ONE Record change request bounds on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let waybill: string;

    /** A new client (its own Organization, so its own quota) and its key. */
    const newCaller = async (...scopes: Scope[]) => {
      const { clientId } = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      return {
        key: (await app.services.clients.issueKey(clientId, scopes)).key,
        organization: `organization-${clientId}`,
      };
    };
    const patch = (token: string, body: unknown) => oneRecord(waybill, { method: "PATCH", token, body });
    const stored = async (organization: string) => {
      const [row] = await app.database.prisma.$queryRawUnsafe<Array<{ requests: number; bytes: number }>>(
        "SELECT count(*)::int AS requests, coalesce(sum(octet_length(request::text)), 0)::int AS bytes FROM action_request WHERE requested_by = $1",
        organization,
      );
      return row!;
    };

    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_CHANGE_REQUESTS_PER_DAY: String(PER_DAY),
        ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY: String(BYTES_PER_DAY),
        ONE_RECORD_OBJECTS_PER_DAY: String(PER_DAY),
        ONE_RECORD_EVENTS_PER_DAY: String(PER_DAY),
      }));
      const milestone = { awb: AWB, state: "DEP", timestamp: "2026-11-21T08:00:00Z", station: "FRA", flight: "LH8160" };
      const ingested = await postJson(`${url}/carrier/handling/shipment/events`, milestone, {
        authorization: `Bearer ${ADMIN_KEY}`,
      });
      expect(ingested.status).toBe(202);
      waybill = `${url}/onerecord/logistics-objects/waybill-${AWB}`;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    it("refuses the audit-trail attack's changes (15 × 200 operations of 38 api:o, ~95 KB) with 400, storing nothing", async () => {
      const reader = await newCaller("events:read");
      const attack = change(waybill, { operations: 200, objects: 38 });
      expect(JSON.stringify(attack).length).toBeGreaterThan(90_000);
      const victim = watchAsVictim(url);
      const answers = await Promise.all(
        Array.from({ length: 15 }, () => plain(waybill, reader.key, { method: "PATCH", body: attack })),
      );
      // Before the checks below: oneRecord's conformance check of each answer runs in this process too.
      expectVictimServed(await victim());
      for (const answer of answers) {
        expect(answer.status).toBe(400);
        // Refused by whichever bound it meets first: the JSON-LD read's or the Change's.
        expect(messageOf(answer)).toMatch(/MAX_JSON_LD_VALUES|MAX_CHANGE_OPERATIONS/);
      }
      const tooMany = await patch(reader.key, change(waybill, { operations: MAX_CHANGE_OPERATIONS + 1 }));
      expect([tooMany.status, messageOf(tooMany)]).toEqual([400, expect.stringContaining("MAX_CHANGE_OPERATIONS")]);
      // Within the operations but with 38 values of api:o: the ontology says exactly one.
      const manyObjects = await patch(reader.key, change(waybill, { operations: MAX_CHANGE_OPERATIONS, objects: 38 }));
      expect([manyObjects.status, messageOf(manyObjects)]).toEqual([400, expect.stringContaining("exactly one api:o")]);
      expect(await stored(reader.organization)).toEqual({ requests: 0, bytes: 0 });
      const trail = await oneRecord(`${waybill}/audit-trail`, { token: reader.key });
      expect([trail.status, trail.body["api:hasActionRequest"]]).toEqual([200, undefined]);
    });

    it("keeps an outdated change inside the bounds as a failed request, answered about the size it was sent", async () => {
      const reader = await newCaller("events:read");
      // The largest a Change may be: every operation, values as long as the stored bound allows.
      const body = change(waybill, { operations: MAX_CHANGE_OPERATIONS, value: "x".repeat(4_000) });
      const res = await patch(reader.key, body);
      expect(res.status).toBe(201);
      const request = await oneRecord(res.headers.get("location")!, { token: reader.key });
      expect(request.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_FAILED" });
      expect(request.body["api:hasChange"]["api:hasOperation"]).toHaveLength(MAX_CHANGE_OPERATIONS);
      const sent = JSON.stringify(body).length;
      const { bytes } = await stored(reader.organization);
      expect(bytes).toBeLessThanOrEqual(MAX_CHANGE_REQUEST_BYTES);
      // The answer is the Change as kept, a little more than what was sent, never a multiple of it.
      expect(request.text.length).toBeLessThan(1.5 * sent);
      const tooLarge = await patch(
        reader.key,
        change(waybill, { operations: MAX_CHANGE_OPERATIONS, value: "x".repeat(6_000) }),
      );
      expect([tooLarge.status, messageOf(tooLarge)]).toEqual([
        413,
        expect.stringContaining("MAX_CHANGE_REQUEST_BYTES"),
      ]);
      expect((await stored(reader.organization)).requests).toBe(1);
    });

    it("takes at most the daily count of change requests from one Organization, however many arrive at once", async () => {
      const reader = await newCaller("events:read");
      const answers = await Promise.all(Array.from({ length: 40 }, () => patch(reader.key, change(waybill))));
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([...Array(PER_DAY).fill(201), ...Array(40 - PER_DAY).fill(429)]);
      for (const refused of answers.filter((answer) => answer.status === 429)) {
        expect(messageOf(refused)).toMatch(/^QUOTA_EXCEEDED: .*ONE_RECORD_CHANGE_REQUESTS_PER_DAY/);
        const retryAfter = Number(refused.headers.get("retry-after"));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(86_400);
      }
      expect((await stored(reader.organization)).requests).toBe(PER_DAY);
      // Another Organization's quota is its own.
      const other = await newCaller("events:read");
      expect((await patch(other.key, change(waybill))).status).toBe(201);
    });

    it("creates at most the daily count of logistics objects for one Organization, however many arrive at once", async () => {
      const writer = await newCaller("objects:write");
      const piece = { "@context": { cargo: CARGO }, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" };
      const answers = await Promise.all(
        Array.from({ length: 30 }, () =>
          oneRecord(`${url}/onerecord/logistics-objects`, { token: writer.key, body: piece }),
        ),
      );
      const statuses = answers.map((answer) => answer.status).sort();
      expect(statuses).toEqual([...Array(PER_DAY).fill(201), ...Array(30 - PER_DAY).fill(429)]);
      expect(messageOf(answers.find((answer) => answer.status === 429)!)).toContain("ONE_RECORD_OBJECTS_PER_DAY");
      const [row] = await app.database.prisma.$queryRawUnsafe<Array<{ n: number }>>(
        "SELECT count(*)::int AS n FROM logistics_object WHERE created_by = $1",
        writer.organization,
      );
      expect(row?.n).toBe(PER_DAY);
    });

    it("takes at most the daily count of logistics events from one Organization", async () => {
      const poster = await newCaller("events:write");
      const event = (i: number) => ({
        "@context": { cargo: CARGO },
        "@type": "cargo:LogisticsEvent",
        "cargo:eventCode": { "@id": "https://onerecord.iata.org/ns/code-lists/StatusCode#FOH" },
        "cargo:eventName": `event ${i}`,
        "cargo:eventDate": { "@type": `${XSD}dateTime`, "@value": "2026-10-16T15:45:00Z" },
      });
      const statuses: number[] = [];
      for (let i = 0; i < PER_DAY + 3; i++)
        statuses.push(
          (
            await oneRecord(`${url}/onerecord/logistics-objects/shipment-${AWB}/logistics-events`, {
              token: poster.key,
              body: event(i),
            })
          ).status,
        );
      expect(statuses).toEqual([...Array(PER_DAY).fill(201), ...Array(3).fill(429)]);
    });

    it("takes at most the daily bytes of change requests from one Organization", async () => {
      const reader = await newCaller("events:read");
      const large = change(waybill, { operations: MAX_CHANGE_OPERATIONS, value: "x".repeat(4_000) });
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await patch(reader.key, large)).status);
      const taken = statuses.filter((status) => status === 201).length;
      expect(statuses).toEqual([...Array(taken).fill(201), ...Array(8 - taken).fill(429)]);
      const { requests, bytes } = await stored(reader.organization);
      expect(requests).toBe(taken);
      expect(bytes).toBeLessThanOrEqual(BYTES_PER_DAY);
      // It stopped because the next one would not fit, not before.
      expect(bytes + bytes / taken).toBeGreaterThan(BYTES_PER_DAY);
    });

    it("answers an audit trail of the latest requests within its budgets, one request at a time, while others are answered", async () => {
      // Requests of the most operations, from two Organizations (each within its count).
      for (const reader of [await newCaller("events:read"), await newCaller("events:read")])
        for (let i = 0; i < 5; i++)
          expect(
            (await patch(reader.key, change(waybill, { operations: MAX_CHANGE_OPERATIONS, value: "y".repeat(200) })))
              .status,
          ).toBe(201);
      // A request stored by an earlier version, before these bounds: 200 operations of 38 api:o (its
      // weights as the migration computes them).
      const legacy = await storeLegacyRequest(app, `waybill-${AWB}`);
      const victim = watchAsVictim(url);
      const trails = await Promise.all(Array.from({ length: 10 }, () => plain(`${waybill}/audit-trail`, ADMIN_KEY)));
      const seen = await victim();
      for (const trail of trails) {
        expect(trail.status).toBe(200);
        const listed = trail.body["api:hasActionRequest"] as Array<Record<string, any>>;
        expect(listed).toHaveLength(MAX_AUDIT_TRAIL_OPERATIONS / MAX_CHANGE_OPERATIONS);
        expect(listed.map((request) => request["@id"])).not.toContain(legacy);
        expect(Buffer.byteLength(trail.text)).toBeLessThan(MAX_AUDIT_TRAIL_BYTES);
      }
      expectVictimServed(seen);
      // The trail as a ONE Record client checks it (after the watch: the check runs in this process).
      await oneRecord(`${waybill}/audit-trail`, { token: ADMIN_KEY });
      // Read alone, the old request is shown within today's bounds.
      const old = await oneRecord(legacy, { token: ADMIN_KEY });
      const operations = old.body["api:hasChange"]["api:hasOperation"] as Array<Record<string, unknown>>;
      expect(operations).toHaveLength(MAX_CHANGE_OPERATIONS);
      expect(operations.every((operation) => !Array.isArray(operation["api:o"]))).toBe(true);
    });
  });
});

/** Writes an action request as the unbounded code stored the attack's change; answers its URI. */
async function storeLegacyRequest(app: App, objectId: string): Promise<string> {
  const id = "00000000-0000-4000-8000-000000000001";
  const operations = Array.from({ length: 200 }, (_, i) => ({
    "@id": `internal:${id}-change-operation-${i + 1}`,
    "@type": [`${API}Operation`],
    [`${API}op`]: [{ "@id": `${API}ADD` }],
    [`${API}s`]: [{ "@value": objectId }],
    [`${API}p`]: [{ "@value": `${CARGO}goodsDescription`, "@type": `${XSD}anyURI` }],
    [`${API}o`]: Array.from({ length: 38 }, (_, j) => ({
      "@id": `internal:${id}-change-operation-${i + 1}-object-${j + 1}`,
      "@type": [`${API}OperationObject`],
      [`${API}hasDatatype`]: [{ "@value": `${XSD}string`, "@type": `${XSD}anyURI` }],
      [`${API}hasValue`]: [{ "@value": `v${i}-${j}` }],
    })),
  }));
  const request = JSON.stringify({
    "@id": `internal:${id}-change`,
    "@type": [`${API}Change`],
    [`${API}hasLogisticsObject`]: [{ "@id": objectId }],
    [`${API}hasRevision`]: [{ "@value": "999", "@type": `${XSD}positiveInteger` }],
    [`${API}hasOperation`]: operations,
  });
  await app.database.prisma.$executeRawUnsafe(
    `INSERT INTO action_request (id, kind, object_id, status, request, requested_by, revision, operations, bytes, requested_at)
     VALUES ($1::uuid, 'CHANGE_REQUEST', $2, 'REQUEST_FAILED', $3::jsonb, 'organization-carrier', 999, 200, octet_length($3::text), now())`,
    id,
    objectId,
    request,
  );
  return `${app.url()}/onerecord/action-requests/${id}`;
}
