import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../../src/app";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import { MAX_PENDING_CHANGE_REQUESTS } from "../../src/onerecord/objects/objects.service";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const API = "https://onerecord.iata.org/ns/api#";
const XSD = "http://www.w3.org/2001/XMLSchema#";
const CONTEXT = { cargo: CARGO, api: API, xsd: XSD };
const EXAMPLE_PIECE = "https://1r.example.com/logistics-objects/1a8ded38-1804-467c-a369-81a411416b7c";

/** A specification example with its Piece's URI (and embedded object id, when given) made ours. */
const example = (name: string, uri: string, embeddedId?: string, replace: Array<[string, string]> = []) => {
  let text = readFileSync(path.join(__dirname, "examples", name), "utf8").replaceAll(EXAMPLE_PIECE, uri);
  for (const [from, to] of replace) text = text.replaceAll(from, to);
  if (embeddedId) text = text.replaceAll("internal:7fc81d1d-6c75-568b-9e47-48c947ed2a07", embeddedId);
  return JSON.parse(text) as Record<string, unknown>;
};

/** A Change replacing a Piece's goodsDescription `from` → `to` at `revision`. */
const describe_ = (uri: string, revision: number, from: string, to: string) => ({
  "@context": CONTEXT,
  "@type": "api:Change",
  "api:hasLogisticsObject": { "@id": uri },
  "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": String(revision) },
  "api:hasOperation": [
    ["api:DELETE", from],
    ["api:ADD", to],
  ].map(([op, value]) => ({
    "@type": "api:Operation",
    "api:op": { "@id": op },
    "api:s": uri,
    "api:p": `${CARGO}goodsDescription`,
    "api:o": { "@type": "api:OperationObject", "api:hasDatatype": `${XSD}string`, "api:hasValue": value },
  })),
});

describe.each(BEHAVIOUR_BACKENDS)("ONE Record change requests on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    /** Granted read access to the holder's objects: its changes wait for the holder. */
    let readerKey: string;
    let readerOrganization: string;
    let strangerKey: string;

    const patch = (uri: string, body: unknown, token = ADMIN_KEY) => oneRecord(uri, { method: "PATCH", token, body });
    const get = (uri: string, token = ADMIN_KEY) => oneRecord(uri, { token });
    const createPiece = async (description: string) => {
      const res = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: {
          "@context": CONTEXT,
          "@type": "cargo:Piece",
          "cargo:goodsDescription": description,
          "cargo:coload": false,
        },
      });
      expect(res.status).toBe(201);
      const uri = res.headers.get("location")!;
      await createOperatorGrants(app.database.prisma, undefined).grant(uri.split("/").pop()!, readerOrganization);
      return uri;
    };
    const requested = async (res: Awaited<ReturnType<typeof oneRecord>>) => {
      expect([res.status, res.body]).toEqual([201, undefined]);
      expect(res.headers.get("type")).toBe(`${API}ChangeRequest`);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${base}/action-requests/[0-9a-f-]{36}$`));
      return location;
    };
    const statusOf = async (actionRequest: string) => {
      const res = await get(actionRequest);
      expect(res.status).toBe(200);
      await assertConforms(res.body);
      return res.body["api:hasRequestStatus"]["@id"] as string;
    };

    beforeAll(async () => {
      // The holder's own changes apply at once (a setting): these tests are about applying them.
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_APPLY_HOLDER_CHANGES: "true",
      }));
      base = `${app.url()}/onerecord`;
      const reader = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      readerKey = (await app.services.clients.issueKey(reader.clientId, ["objects:write"])).key;
      readerOrganization = `organization-${reader.clientId}`;
      const stranger = await app.services.clients.createClient({ name: "stranger", callbackPrefixes: ["*"] });
      strangerKey = (await app.services.clients.issueKey(stranger.clientId, ["objects:write"])).key;
    });
    afterAll(() => disposers.disposeAll());

    it("applies the holder's change at once: a ChangeRequest accepted, the object at its next revision", async () => {
      const piece = await createPiece("BOOKS");
      const request = await requested(await patch(piece, describe_(piece, 1, "BOOKS", "MAGAZINES")));
      const res = await get(request);
      expect(res.headers.get("type")).toBe(`${API}ChangeRequest`);
      expect(res.headers.get("last-modified")).toMatch(/GMT$/);
      expect(res.body).toMatchObject({
        "@id": request,
        "@type": "api:ChangeRequest",
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:isRequestedBy": { "@id": expect.stringMatching(/\/logistics-objects\/organization-/) },
        "api:hasRequestStatusHistory": { "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" } },
        "api:hasChange": { "@type": "api:Change", "api:hasLogisticsObject": { "@id": piece } },
      });
      // Typed by the context's coercion: the compacted form is the bare date and time.
      expect(res.body["api:hasRequestStatusSince"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/);
      await assertConforms(res.body);
      const object = await get(piece);
      expect([object.headers.get("revision"), object.body["cargo:goodsDescription"]]).toEqual(["2", "MAGAZINES"]);
    });

    it("leaves a reader's change pending until the holder accepts it, then applies it", async () => {
      const piece = await createPiece("PENDING");
      const request = await requested(await patch(piece, describe_(piece, 1, "PENDING", "ACCEPTED"), readerKey));
      expect(await statusOf(request)).toBe("api:REQUEST_PENDING");
      expect((await get(piece)).headers.get("revision")).toBe("1");
      // Only the holder decides.
      expect(
        (await oneRecord(`${request}?status=REQUEST_ACCEPTED`, { method: "PATCH", token: readerKey })).status,
      ).toBe(403);
      const accepted = await oneRecord(`${request}?status=${encodeURIComponent(`${API}REQUEST_ACCEPTED`)}`, {
        method: "PATCH",
        token: ADMIN_KEY,
      });
      expect(accepted.status).toBe(204);
      expect(accepted.headers.get("location")).toBe(request);
      expect(await statusOf(request)).toBe("api:REQUEST_ACCEPTED");
      const object = await get(piece);
      expect([object.headers.get("revision"), object.body["cargo:goodsDescription"]]).toEqual(["2", "ACCEPTED"]);
      // Decided once.
      const again = await oneRecord(`${request}?status=REQUEST_REJECTED`, { method: "PATCH", token: ADMIN_KEY });
      expect(again.status).toBe(422);
      await assertConforms(again.body);
    });

    it("lets the holder reject and the requester revoke a pending change; neither touches the object", async () => {
      const piece = await createPiece("KEPT");
      const rejected = await requested(await patch(piece, describe_(piece, 1, "KEPT", "NO"), readerKey));
      expect(
        (await oneRecord(`${rejected}?status=REQUEST_REJECTED`, { method: "PATCH", token: ADMIN_KEY })).status,
      ).toBe(204);
      expect(await statusOf(rejected)).toBe("api:REQUEST_REJECTED");

      const revoked = await requested(await patch(piece, describe_(piece, 1, "KEPT", "NEITHER"), readerKey));
      expect((await oneRecord(revoked, { method: "DELETE", token: strangerKey })).status).toBe(403);
      expect((await oneRecord(revoked, { method: "DELETE", token: readerKey })).status).toBe(204);
      const res = await get(revoked);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_REVOKED" },
        "api:isRevokedBy": { "@id": expect.stringContaining(readerOrganization) },
      });
      // Revoked when its status last changed, not when it was asked.
      expect(res.body["api:isRevokedAt"]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d*[1-9])?Z$/);
      expect(res.body["api:isRevokedAt"]).toBe(res.body["api:hasRequestStatusSince"]);
      expect(Date.parse(res.body["api:isRevokedAt"])).toBeGreaterThanOrEqual(Date.parse(res.body["api:isRequestedAt"]));
      expect((await oneRecord(revoked, { method: "DELETE", token: readerKey })).status).toBe(422);
      expect((await get(piece)).body["cargo:goodsDescription"]).toBe("KEPT");
    });

    it("fails a change against an outdated revision, with a 409 api:Error in the request", async () => {
      const piece = await createPiece("FIRST");
      await requested(await patch(piece, describe_(piece, 1, "FIRST", "SECOND")));
      const stale = await requested(await patch(piece, describe_(piece, 1, "SECOND", "THIRD")));
      const res = await get(stale);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_FAILED" },
        "api:hasError": {
          "@type": "api:Error",
          "api:hasErrorDetail": { "api:hasCode": "409", "api:hasResource": piece },
        },
      });
      await assertConforms(res.body);
      expect((await get(piece)).body["cargo:goodsDescription"]).toBe("SECOND");
    });

    it("rejects the other pending changes to a revision once one of them is accepted", async () => {
      const piece = await createPiece("SHARED");
      const one = await requested(await patch(piece, describe_(piece, 1, "SHARED", "ONE"), readerKey));
      const two = await requested(await patch(piece, describe_(piece, 1, "SHARED", "TWO"), readerKey));
      expect((await oneRecord(`${one}?status=REQUEST_ACCEPTED`, { method: "PATCH", token: ADMIN_KEY })).status).toBe(
        204,
      );
      expect(await statusOf(two)).toBe("api:REQUEST_REJECTED");
      expect((await get(two)).body["api:hasError"]["api:hasErrorDetail"]["api:hasCode"]).toBe("409");
    });

    it("fails a change that does not apply (a value to delete that is not there), all or nothing", async () => {
      const piece = await createPiece("WHOLE");
      const change = describe_(piece, 1, "NOT THERE", "PARTIAL");
      const request = await requested(await patch(piece, change));
      const res = await get(request);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_FAILED" },
        "api:hasError": { "api:hasErrorDetail": { "api:hasCode": "422" } },
      });
      const object = await get(piece);
      expect([object.headers.get("revision"), object.body["cargo:goodsDescription"]]).toEqual(["1", "WHOLE"]);
    });

    it("refuses a Change for another object (400) and one that touches the events (400), as the specification's examples C6, C7", async () => {
      const piece = await createPiece("REFUSED");
      const other = await patch(piece, example("Change_example6.json", piece));
      expect(other.status).toBe(400);
      await assertConforms(other.body);
      const events = await patch(piece, example("Change_example7.json", piece));
      expect(events.status).toBe(400);
      expect(events.body["api:hasErrorDetail"]).toEqual(
        expect.arrayContaining([expect.objectContaining({ "api:hasProperty": `${CARGO}events` })]),
      );
      expect(await app.database.prisma.actionRequest.count({ where: { objectId: piece.split("/").pop()! } })).toBe(0);
    });

    /** A Change of `operations`, each [op, subject, predicate, datatype, value]. */
    const changeOf = (uri: string, revision: number, operations: Array<[string, string, string, string, string]>) => ({
      "@context": CONTEXT,
      "@type": "api:Change",
      "api:hasLogisticsObject": { "@id": uri },
      "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": String(revision) },
      "api:hasOperation": operations.map(([op, s, p, datatype, value]) => ({
        "@type": "api:Operation",
        "api:op": { "@id": op },
        "api:s": s,
        "api:p": p,
        "api:o": { "@type": "api:OperationObject", "api:hasDatatype": datatype, "api:hasValue": value },
      })),
    });
    const refusedUnstored = async (piece: string, body: unknown, message: RegExp) => {
      const res = await patch(piece, body, readerKey);
      expect(res.status).toBe(400);
      await assertConforms(res.body);
      expect(JSON.stringify(res.body["api:hasErrorDetail"])).toMatch(message);
    };

    it("refuses (400) and stores nothing: a blank node embedded in itself, in a cycle, twice, or under a subject the object lacks", async () => {
      const piece = await createPiece("CYCLES");
      const VALUE = `${CARGO}Value`;
      const UNIT = `${CARGO}unit`;
      await refusedUnstored(
        piece,
        changeOf(piece, 1, [["api:ADD", "_:b0", UNIT, VALUE, "_:b0"]]),
        /_:b0 would be embedded in itself/,
      );
      await refusedUnstored(
        piece,
        changeOf(piece, 1, [
          ["api:ADD", piece, `${CARGO}grossWeight`, VALUE, "_:b0"],
          ["api:ADD", "_:b1", UNIT, VALUE, "_:b0"],
        ]),
        /_:b0 is embedded once, not twice/,
      );
      await refusedUnstored(
        piece,
        changeOf(piece, 1, [
          ["api:ADD", "_:b0", UNIT, VALUE, "_:b1"],
          ["api:ADD", "_:b1", UNIT, VALUE, "_:b0"],
        ]),
        /would be embedded in itself/,
      );
      await refusedUnstored(
        piece,
        changeOf(piece, 1, [["api:ADD", "_:b9", `${CARGO}goodsDescription`, `${XSD}string`, "X"]]),
        /_:b9 is not a node this change adds/,
      );
      await refusedUnstored(
        piece,
        changeOf(piece, 1, [["api:ADD", "internal:not-embedded", `${CARGO}goodsDescription`, `${XSD}string`, "X"]]),
        /internal:not-embedded is neither the logistics object nor one of its embedded objects/,
      );
      expect(await app.database.prisma.actionRequest.count({ where: { objectId: piece.split("/").pop()! } })).toBe(0);
      expect((await get(piece)).headers.get("revision")).toBe("1");
    });

    it("fails, never leaves pending, an accepted change that cannot be applied (one stored before it was checked)", async () => {
      const piece = await createPiece("STORED");
      const request = await requested(await patch(piece, describe_(piece, 1, "STORED", "LATER"), readerKey));
      // As a self-embedding change was stored before changes were checked up front.
      const id = request.split("/").pop()!;
      const row = await app.database.prisma.actionRequest.findUniqueOrThrow({ where: { id } });
      const stored = row.request as Record<string, unknown>;
      const [operation] = stored[`${API}hasOperation`] as Array<Record<string, unknown>>;
      const [object] = operation![`${API}o`] as Array<Record<string, unknown>>;
      operation![`${API}op`] = [{ "@id": `${API}ADD` }];
      operation![`${API}s`] = [{ "@value": "_:b0" }];
      operation![`${API}p`] = [{ "@value": `${CARGO}unit`, "@type": `${XSD}anyURI` }];
      object![`${API}hasDatatype`] = [{ "@value": `${CARGO}Value`, "@type": `${XSD}anyURI` }];
      object![`${API}hasValue`] = [{ "@value": "_:b0" }];
      stored[`${API}hasOperation`] = [operation];
      await app.database.prisma.$executeRawUnsafe(
        "UPDATE action_request SET request = $1::jsonb WHERE id = $2::uuid",
        JSON.stringify(stored),
        id,
      );

      const accepted = await oneRecord(`${request}?status=REQUEST_ACCEPTED`, { method: "PATCH", token: ADMIN_KEY });
      expect(accepted.status).toBe(204);
      const res = await get(request);
      await assertConforms(res.body);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_FAILED" },
        "api:hasError": { "@type": "api:Error", "api:hasErrorDetail": { "api:hasCode": "422" } },
      });
      expect((await get(piece)).body["cargo:goodsDescription"]).toBe("STORED");
    });

    it("caps one requester's pending change requests on one object (409, nothing stored); a decision frees a place", async () => {
      const piece = await createPiece("CAPPED");
      const pendingOne = () => patch(piece, describe_(piece, 1, "CAPPED", "MORE"), readerKey);
      const first = await requested(await pendingOne());
      for (let i = 1; i < MAX_PENDING_CHANGE_REQUESTS; i++) await requested(await pendingOne());
      const refused = await pendingOne();
      expect(refused.status).toBe(409);
      await assertConforms(refused.body);
      const objectId = piece.split("/").pop()!;
      expect(await app.database.prisma.actionRequest.count({ where: { objectId } })).toBe(MAX_PENDING_CHANGE_REQUESTS);
      // Revoking one frees a place.
      expect((await oneRecord(first, { method: "DELETE", token: readerKey })).status).toBe(204);
      await requested(await pendingOne());
    });

    it("applies the specification's examples C1 to C4 in turn: literals, an embedded Value added, changed and deleted", async () => {
      const piece = await createPiece("EXAMPLES");
      const accepted = async (body: unknown) => {
        const request = await requested(await patch(piece, body));
        const status = await get(request);
        expect([status.body["api:hasRequestStatus"]["@id"], status.body["api:hasError"]]).toEqual([
          "api:REQUEST_ACCEPTED",
          undefined,
        ]);
        return (await get(piece)).body;
      };
      const c1 = example("Change_example1.json", piece);
      (c1["api:hasOperation"] as Array<Record<string, unknown>>).unshift({
        "@type": "api:Operation",
        "api:op": { "@id": "api:DELETE" },
        "api:s": piece,
        "api:p": `${CARGO}goodsDescription`,
        "api:o": [{ "@type": "api:OperationObject", "api:hasDatatype": `${XSD}string`, "api:hasValue": "EXAMPLES" }],
      });
      let body = await accepted(c1);
      expect(body).toMatchObject({
        "cargo:goodsDescription": "ONE Record Advertisement Materials",
        "cargo:coload": true,
      });
      body = await accepted({
        ...example("Change_example2.json", piece),
        "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "2" },
      });
      const weight = body["cargo:grossWeight"];
      expect(weight["@id"]).toMatch(/^internal:/);
      expect(weight["cargo:numericalValue"]).toEqual({ "@type": "xsd:double", "@value": "20.0" });
      body = await accepted({
        ...example("Change_example3.json", piece, weight["@id"]),
        "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "3" },
      });
      expect(body["cargo:grossWeight"]["cargo:numericalValue"]).toEqual({ "@type": "xsd:double", "@value": "25.0" });
      await assertConforms(body);
      // Example C4 deletes the Value of example C2 (20); after C3 it holds 25.
      const c4 = example("Change_example4.json", piece, weight["@id"], [
        ['"api:hasValue": "20"', '"api:hasValue": "25"'],
      ]);
      body = await accepted({ ...c4, "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "4" } });
      expect(body["cargo:grossWeight"]).toBeUndefined();
      expect(body["api:hasRevision"]).toBe("5");
    });

    it("lists the change requests in the audit trail, filtered by status and time", async () => {
      const piece = await createPiece("AUDIT");
      const accepted = await requested(await patch(piece, describe_(piece, 1, "AUDIT", "AUDITED")));
      const pending = await requested(await patch(piece, describe_(piece, 2, "AUDITED", "MAYBE"), readerKey));
      const trail = await get(`${piece}/audit-trail`);
      expect(trail.status).toBe(200);
      expect(trail.body).toMatchObject({
        "@id": `${piece}/audit-trail`,
        "@type": "api:AuditTrail",
        "api:hasLatestRevision": "2",
      });
      expect(trail.body["api:hasActionRequest"].map((r: { "@id": string }) => r["@id"])).toEqual([accepted, pending]);
      await assertConforms(trail.body);
      const onlyPending = await get(`${piece}/audit-trail?status=REQUEST_PENDING`);
      expect(onlyPending.body["api:hasActionRequest"]["@id"]).toBe(pending);
      const later = await get(`${piece}/audit-trail?updated-from=20990101T000000Z`);
      expect(later.body["api:hasActionRequest"]).toBeUndefined();
      await assertConforms(later.body);
      expect((await get(`${piece}/audit-trail?status=DONE`)).status).toBe(400);
      expect((await get(`${piece}/audit-trail`, strangerKey)).status).toBe(403);
    });

    it("shows an action request only to its requester and the object's readers; 404 for an unknown one", async () => {
      const piece = await createPiece("PRIVATE");
      const request = await requested(await patch(piece, describe_(piece, 1, "PRIVATE", "SEEN"), readerKey));
      expect((await get(request, readerKey)).status).toBe(200);
      expect((await get(request, strangerKey)).status).toBe(403);
      expect((await get(`${base}/action-requests/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
      expect((await get(`${base}/action-requests/not-a-uuid`)).status).toBe(404);
      expect((await patch(piece, describe_(piece, 1, "PRIVATE", "NO"), strangerKey)).status).toBe(403);
    });

    it("answers a 2.2.0 client without the 2.3.0 status history", async () => {
      const piece = await createPiece("VERSION");
      const request = await requested(await patch(piece, describe_(piece, 1, "VERSION", "OLD")));
      const res = await oneRecord(request, { token: ADMIN_KEY, accept: "application/ld+json; version=2.2.0" });
      expect(res.headers.get("content-type")).toBe("application/ld+json; version=2.2.0");
      expect(res.body["api:hasRequestStatusHistory"]).toBeUndefined();
      expect(res.body["api:hasRequestStatusSince"]).toBeUndefined();
    });
  });

  describeBackend(backend)(`on default settings over ${backend}`, () => {
    const disposers = new Disposers();
    let base: string;
    beforeAll(async () => {
      const { app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" });
      base = `${app.url()}/onerecord`;
    });
    afterAll(() => disposers.disposeAll());

    it("leaves the holder's own change pending until it accepts it, as the specification's flow has it", async () => {
      const created = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS", "cargo:coload": false },
      });
      const piece = created.headers.get("location")!;
      const res = await oneRecord(piece, {
        method: "PATCH",
        token: ADMIN_KEY,
        body: describe_(piece, 1, "BOOKS", "MAPS"),
      });
      expect([res.status, res.headers.get("type")]).toEqual([201, `${API}ChangeRequest`]);
      const request = res.headers.get("location")!;
      const pending = await oneRecord(request, { token: ADMIN_KEY });
      expect(pending.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_PENDING" });
      expect((await oneRecord(piece, { token: ADMIN_KEY })).body["cargo:goodsDescription"]).toBe("BOOKS");
      // The holder decides: 204 with Location and Type, and the change applied.
      const decided = await oneRecord(`${request}?status=REQUEST_ACCEPTED`, { method: "PATCH", token: ADMIN_KEY });
      expect([decided.status, decided.headers.get("location"), decided.headers.get("type")]).toEqual([
        204,
        request,
        `${API}ChangeRequest`,
      ]);
      const accepted = await oneRecord(request, { token: ADMIN_KEY });
      expect(accepted.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_ACCEPTED" });
      const object = await oneRecord(piece, { token: ADMIN_KEY });
      expect([object.headers.get("revision"), object.body["cargo:goodsDescription"]]).toEqual(["2", "MAPS"]);
      // Decided once.
      const again = await oneRecord(`${request}?status=REQUEST_REJECTED`, { method: "PATCH", token: ADMIN_KEY });
      expect(again.status).toBe(422);
    });
  });
});
