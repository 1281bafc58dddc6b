import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import {
  MAX_CONTEXT_TERMS,
  MAX_JSON_LD_DEPTH,
  MAX_JSON_LD_KEYS,
  MAX_JSON_LD_MERGE_COMPARISONS,
  MAX_JSON_LD_VALUES_PER_PROPERTY,
  MAX_JSON_LD_OBJECTS,
  MAX_JSON_LD_TEXT,
  MAX_JSON_LD_VALUES,
} from "../../src/onerecord/jsonld-bounds";
import { MAX_ERROR_DETAILS } from "../../src/onerecord/api-error";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { WORST_SHAPES, worstBody } from "../support/jsonld-worst-bodies";
import { assertConforms } from "../support/onerecord-conformance";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";
import { expectVictimServed, watchAsVictim } from "../support/victim";

/**
 * The request path of the ONE Record API refuses what it will not read before reading it: who may
 * write is checked before the body is read, a body over what one request may cost is refused before
 * the JSON-LD algorithms see it, text no database stores is a 400, never a 500 (docs/ONE-RECORD.md
 * "Protocol").
 */
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const AWB = "020-12345675";

/** A hostile body: a property-scoped context of 6,000 terms, its term used 6,000 times (~490 KB). */
function scopedContextBody(): Record<string, unknown> {
  const scoped: Record<string, string> = {};
  for (let i = 0; i < 6_000; i++) scoped[`t${i}`] = `${CARGO}term${i}`;
  return {
    "@context": { cargo: CARGO, p: { "@id": `${CARGO}goodsDescription`, "@context": scoped } },
    "@type": "cargo:Piece",
    p: Array.from({ length: 6_000 }, () => ({ t1: "x" })),
  };
}

/** Just under 1 MB of embedded cargo:Value nodes. */
function manyNodesBody(): Record<string, unknown> {
  const value = (i: number) => ({
    "@type": "cargo:Value",
    "cargo:numericalValue": i,
    "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
  });
  const body = {
    "@context": { cargo: CARGO },
    "@type": "cargo:Piece",
    "cargo:grossWeight": Array.from({ length: 7_000 }, (_, i) => value(i)),
  };
  expect(JSON.stringify(body).length).toBeGreaterThan(900_000);
  expect(JSON.stringify(body).length).toBeLessThan(1_000_000);
  return body;
}

const piece = (overrides: Record<string, unknown> = {}) => ({
  "@context": { cargo: CARGO },
  "@type": "cargo:Piece",
  ...overrides,
});

const departure = (overrides: Record<string, unknown> = {}) => ({
  "@context": { cargo: CARGO },
  "@type": "cargo:StatusUpdateEvent",
  "cargo:eventCode": { "@id": `${STATUS}DEP` },
  "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-10-16T15:45:00Z" },
  "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
  ...overrides,
});

/** The api:Error's first detail message. */
const messageOf = (answer: OneRecordAnswer): string => {
  expect(answer.body["@type"]).toBe("api:Error");
  const details = answer.body["api:hasErrorDetail"];
  return (Array.isArray(details) ? details[0] : details)["api:hasMessage"] as string;
};

describe.each(BEHAVIOUR_BACKENDS)("ONE Record request bounds on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let writerKey: string;
    let subscriberKey: string;
    let readerKey: string;

    const newKey = async (...scopes: Scope[]) => {
      const { clientId } = await app.services.clients.createClient({
        name: `client ${scopes.join(" ")}`,
        callbackPrefixes: ["*"],
      });
      return (await app.services.clients.issueKey(clientId, scopes)).key;
    };

    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${url}/onerecord`;
      writerKey = await newKey("objects:write", "events:read", "events:write");
      subscriberKey = await newKey("subscriptions");
      readerKey = await newKey("events:read");
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const post = (body: unknown, token: string | null = writerKey) =>
      oneRecord(`${base}/logistics-objects`, { token, body });
    /**
     * A POST without `oneRecord`'s conformance check of the answer: that check runs in this process,
     * beside the gateway, and would count as the gateway holding its loop.
     */
    const plainPost = async (
      body: unknown,
      token = writerKey,
      path = "logistics-objects",
      signal: AbortSignal | undefined = undefined,
    ): Promise<OneRecordAnswer> => {
      const res = await fetch(`${base}/${path}`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/ld+json",
          "content-type": "application/ld+json",
        },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : undefined };
    };
    const createdPiece = async (token = writerKey) => {
      const res = await post(piece(), token);
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };

    it("refuses the scoped-context body and the many-node body with 400, naming the limit, while /healthz is answered", async () => {
      const victim = watchAsVictim(url);
      const [scoped, many] = await Promise.all([plainPost(scopedContextBody()), plainPost(manyNodesBody())]);
      expectVictimServed(await victim());
      expect(scoped.status).toBe(400);
      expect(messageOf(scoped)).toMatch(/^INVALID_JSON_LD: .*@context.*no scoped context/);
      expect(many.status).toBe(400);
      expect(messageOf(many)).toContain("MAX_JSON_LD_OBJECTS");
      const tooLarge = await post(piece({ "cargo:goodsDescription": "x".repeat(1_100_000) }));
      expect([tooLarge.status, messageOf(tooLarge)]).toEqual([413, expect.stringMatching(/^PAYLOAD_TOO_LARGE/)]);
    });

    it("reads the costliest bodies inside the bounds, all at once, each to its answer, while /healthz is answered", async () => {
      // Every shape of test/support/jsonld-worst-bodies.ts at its bound (test/onerecord/jsonld-worst-case.test.ts
      // measures each on every route), as Pieces, and twice over as subscriptions from a key with that scope only.
      const bodies = Object.values(WORST_SHAPES).map((shape) => worstBody(piece(), shape));
      const subscription = { "@context": { api: "https://onerecord.iata.org/ns/api#" }, "@type": "api:Subscription" };
      const subscriptions = Object.values(WORST_SHAPES).map((shape) => worstBody(subscription, shape));
      const victim = watchAsVictim(url);
      const answers = await Promise.all([
        ...bodies.map((body) => plainPost(body)),
        ...subscriptions.map((body) => plainPost(body, subscriberKey, "subscriptions")),
      ]);
      expectVictimServed(await victim());
      const refused = answers.filter(
        (answer) => answer.status >= 500 || /more than this server reads/.test(answer.text),
      );
      expect(
        refused.map((answer) => `${answer.status} ${answer.status === 400 ? messageOf(answer) : answer.text}`),
      ).toEqual([]);
      expect(answers.slice(0, bodies.length).map((answer) => answer.status)).toEqual(bodies.map(() => 201));
    });

    it("refuses a costly body from a caller who may not write before reading it: 403, 401 without credentials", async () => {
      expect((await post(scopedContextBody(), subscriberKey)).status).toBe(403);
      expect((await post(manyNodesBody(), subscriberKey)).status).toBe(403);
      expect((await post(scopedContextBody(), null)).status).toBe(401);
      // A change request on an object the caller may not read, an event it may not post.
      const other = await createdPiece();
      const patched = await oneRecord(other, {
        method: "PATCH",
        token: await newKey("objects:write"),
        body: scopedContextBody(),
      });
      expect([patched.status, messageOf(patched)]).toEqual([403, expect.stringMatching(/^ACCESS_DENIED/)]);
      const missing = await oneRecord(`${base}/logistics-objects/no-such-object`, {
        method: "PATCH",
        token: writerKey,
        body: manyNodesBody(),
      });
      expect(missing.status).toBe(404);
      const event = await oneRecord(`${base}/logistics-objects/shipment-${AWB}/logistics-events`, {
        token: readerKey,
        body: scopedContextBody(),
      });
      expect(event.status).toBe(403);
    });

    it("bounds depth, values and terms, and takes only simple term definitions", async () => {
      let deep: Record<string, unknown> = { "@value": "x" };
      for (let i = 0; i < MAX_JSON_LD_DEPTH; i++) deep = { "cargo:goodsDescription": deep };
      expect(messageOf(await post(piece({ "cargo:x": deep })))).toContain("MAX_JSON_LD_DEPTH");
      const values = Array.from({ length: MAX_JSON_LD_VALUES }, (_, i) => String(i));
      expect(messageOf(await post(piece({ "cargo:goodsDescription": values })))).toContain("MAX_JSON_LD_VALUES");
      const objects = Array.from({ length: MAX_JSON_LD_OBJECTS }, () => ({ "@value": "x" }));
      expect(messageOf(await post(piece({ "cargo:goodsDescription": objects })))).toContain("MAX_JSON_LD_OBJECTS");
      const terms: Record<string, string> = { cargo: CARGO };
      for (let i = 0; i < MAX_CONTEXT_TERMS; i++) terms[`t${i}`] = `${CARGO}t${i}`;
      expect(messageOf(await post({ ...piece(), "@context": terms }))).toContain("MAX_CONTEXT_TERMS");
      const keys = Object.fromEntries(
        Array.from({ length: MAX_JSON_LD_KEYS }, (_, i) => [`https://example.com/p${i}`, "v"]),
      );
      expect(messageOf(await post(piece(keys)))).toContain("MAX_JSON_LD_KEYS");
      expect(messageOf(await post(piece({ "cargo:goodsDescription": "x".repeat(MAX_JSON_LD_TEXT) })))).toContain(
        "MAX_JSON_LD_TEXT",
      );
      // One value more in one property than the merge comparisons allow: refused before the quadratic step.
      const marks = Array.from({ length: MAX_JSON_LD_VALUES_PER_PROPERTY + 1 }, (_, i) => `m${i}`);
      const merged = await post(piece({ "cargo:shippingMarks": marks }));
      expect([merged.status, messageOf(merged)]).toEqual([
        400,
        expect.stringContaining(
          `over ${MAX_JSON_LD_MERGE_COMPARISONS} (MAX_JSON_LD_MERGE_COMPARISONS: one property holds at most 500 values); the most are 501 values of ${CARGO}shippingMarks`,
        ),
      ]);
      expect((await post(piece({ "cargo:shippingMarks": marks.slice(1) }))).status).toBe(201);
      // No property of ONE Record holds an RDF list, and no object stores one.
      const list = await post(piece({ "cargo:shippingMarks": { "@list": ["a", "b"] } }));
      expect([list.status, messageOf(list)]).toEqual([400, expect.stringContaining("@list")]);
      const listTerm = await post({
        "@context": { cargo: CARGO, marks: { "@id": `${CARGO}shippingMarks`, "@container": "@list" } },
        "@type": "cargo:Piece",
        marks: ["a", "b"],
      });
      expect([listTerm.status, messageOf(listTerm)]).toEqual([400, expect.stringContaining("@container")]);
      const imported = await post({ ...piece(), "@context": { "@import": "https://example.com/c", cargo: CARGO } });
      expect([imported.status, messageOf(imported)]).toEqual([400, expect.stringContaining("@import")]);
      const typeScoped = await post({
        ...piece(),
        "@context": { cargo: CARGO, Piece: { "@id": `${CARGO}Piece`, "@context": { d: `${CARGO}goodsDescription` } } },
      });
      expect(typeScoped.status).toBe(400);
      // What ONE Record clients send is read: prefixes and simple term definitions.
      const simple = await post({
        "@context": {
          cargo: CARGO,
          weight: { "@id": `${CARGO}grossWeight`, "@container": "@set" },
          description: { "@id": `${CARGO}goodsDescription`, "@type": "http://www.w3.org/2001/XMLSchema#string" },
        },
        "@type": "cargo:Piece",
        description: "books",
      });
      expect(simple.status).toBe(201);
    });

    it("answers a body with 900 wrong properties with at most 100 error details, the last counting the rest", async () => {
      const API = "https://onerecord.iata.org/ns/api#";
      const wrong = Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`${API}p${i}`, "x"]));
      const res = await plainPost({ "@type": `${API}Subscription`, ...wrong }, subscriberKey, "subscriptions");
      const details = res.body["api:hasErrorDetail"] as Array<Record<string, string>>;
      expect([res.status, details.length]).toEqual([400, MAX_ERROR_DETAILS]);
      expect(details.at(-1)!["api:hasMessage"]).toMatch(/ \d+ more errors not listed \(MAX_ERROR_DETAILS\)$/);
      expect(res.text.length).toBeLessThan(100_000);
    });

    it("refuses text with NUL or a lone surrogate in a body with 400 naming the property, never 500", async () => {
      for (const text of ["a\u0000b", "a\ud800b", "\udc00"]) {
        const created = await post(piece({ "cargo:goodsDescription": text }));
        expect([created.status, messageOf(created)]).toEqual([
          400,
          expect.stringMatching(/^INVALID_JSON_LD: cargo:goodsDescription: holds a NUL character/),
        ]);
        const milestone = await oneRecord(`${base}/logistics-objects/shipment-${AWB}/logistics-events`, {
          token: writerKey,
          body: departure({ "cargo:eventLocation": { "@id": text } }),
        });
        expect(milestone.status).toBe(400);
        const key = await oneRecord(`${base}/logistics-objects`, { token: writerKey, body: piece({ [text]: "x" }) });
        expect(key.status).toBe(400);
      }
      const target = await createdPiece();
      const change = await oneRecord(target, {
        method: "PATCH",
        token: writerKey,
        body: { "@context": { api: "https://onerecord.iata.org/ns/api#" }, "@type": "api:Change", "api:s": "\u0000" },
      });
      expect(change.status).toBe(400);
      // A well-formed surrogate pair is text like any other.
      expect((await post(piece({ "cargo:goodsDescription": "\ud83d\udce6 parcel" }))).status).toBe(201);
    });

    it("refuses Unicode non-characters in body strings and keys with 400 naming the property", async () => {
      for (const text of ["a\ufffe", "\uffff", "x\ufdd0y", "\ufdef", "\u{1fffe}", "\u{10ffff}"]) {
        const created = await post(piece({ "cargo:goodsDescription": text }));
        expect([created.status, messageOf(created)]).toEqual([
          400,
          expect.stringMatching(/^INVALID_JSON_LD: cargo:goodsDescription: holds .*non-character/),
        ]);
        const key = await oneRecord(`${base}/logistics-objects`, {
          token: writerKey,
          body: piece({ [text]: "x" }),
        });
        expect(key.status).toBe(400);
      }
      // Their neighbours are characters like any other.
      expect((await post(piece({ "cargo:goodsDescription": "\ufdcf\ufdf0\ufffd\u{1fffd}" }))).status).toBe(201);
    });

    it("refuses a body that is not valid UTF-8 (400) instead of storing U+FFFD in its place", async () => {
      const text = JSON.stringify(piece({ "cargo:goodsDescription": "a?b" }));
      const bytes = Buffer.from(text, "utf8");
      bytes[bytes.indexOf("a?b") + 1] = 0xff; // not a byte UTF-8 has
      const res = await fetch(`${base}/logistics-objects`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${writerKey}`,
          accept: "application/ld+json",
          "content-type": "application/ld+json",
        },
        body: bytes,
      });
      const body = (await res.json()) as Record<string, unknown>;
      expect([res.status, body["@type"]]).toEqual([400, "api:Error"]);
      await assertConforms(body);
      expect(JSON.stringify(body)).toContain("not valid UTF-8");
      // The same body with the byte a UTF-8 character is created.
      expect((await post(piece({ "cargo:goodsDescription": "a\u00ffb" }))).status).toBe(201);
    });

    it("answers ids with control characters 404 and query values with them 400, never 500", async () => {
      const objects = `${base}/logistics-objects`;
      expect((await oneRecord(`${objects}/a%00b`, { token: writerKey })).status).toBe(404);
      expect((await oneRecord(`${objects}/a%01b/audit-trail`, { token: writerKey })).status).toBe(404);
      const event = await oneRecord(`${objects}/shipment-${AWB}/logistics-events/a%00b`, { token: writerKey });
      expect([event.status, messageOf(event)]).toEqual([404, expect.stringMatching(/^LOGISTICS_EVENT_NOT_FOUND/)]);
      expect((await oneRecord(`${base}/action-requests/a%00b`, { token: writerKey })).status).toBe(404);
      const query = await oneRecord(`${objects}/shipment-${AWB}/logistics-events?event-code=%00`, { token: writerKey });
      expect([query.status, messageOf(query)]).toEqual([400, expect.stringMatching(/^INVALID_QUERY_PARAMETER/)]);
    });

    it('gives an object asked for as ".." an id of its own', async () => {
      for (const id of ["..", "."]) {
        const res = await post(piece({ "@id": `${base}/logistics-objects/${id}` }));
        expect(res.status).toBe(201);
        expect(res.headers.get("location")).toMatch(new RegExp(`^${base}/logistics-objects/[0-9a-f-]{36}$`));
      }
    });

    it("takes a DELETE with a Content-Type and no body", async () => {
      const res = await oneRecord(`${base}/action-requests/00000000-0000-4000-8000-000000000000`, {
        method: "DELETE",
        token: writerKey,
        headers: { "content-type": "application/json" },
      });
      expect([res.status, messageOf(res)]).toEqual([404, expect.stringMatching(/^ACTION_REQUEST_NOT_FOUND/)]);
    });

    it("answers Content-Language on bodiless answers: the awb- redirect's 307, a revoke's 204", async () => {
      await oneRecord(`${base}/logistics-objects/shipment-${AWB}/logistics-events`, {
        token: ADMIN_KEY,
        body: departure(),
      });
      const redirect = await oneRecord(`${base}/logistics-objects/awb-${AWB}`, { token: readerKey });
      expect(redirect.status).toBe(307);
      expect(redirect.headers.get("content-language")).toBe("en-US");
      // The Waybill is readable with events:read, not writable: the reader's change waits, and it revokes it.
      const waybill = `${base}/logistics-objects/waybill-${AWB}`;
      const revision = (await oneRecord(waybill, { token: readerKey })).headers.get("revision")!;
      const change = await oneRecord(waybill, {
        method: "PATCH",
        token: readerKey,
        body: {
          "@context": { api: "https://onerecord.iata.org/ns/api#", cargo: CARGO },
          "@type": "api:Change",
          "api:hasLogisticsObject": { "@id": waybill },
          "api:hasRevision": { "@type": "http://www.w3.org/2001/XMLSchema#positiveInteger", "@value": revision },
          "api:hasOperation": {
            "@type": "api:Operation",
            "api:op": { "@id": "api:ADD" },
            "api:s": waybill,
            "api:p": `${CARGO}shippingInfo`,
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": "http://www.w3.org/2001/XMLSchema#string",
              "api:hasValue": "books",
            },
          },
        },
      });
      expect([change.status, change.text]).toEqual([201, ""]);
      const revoked = await oneRecord(change.headers.get("location")!, { method: "DELETE", token: readerKey });
      expect([revoked.status, revoked.headers.get("content-language")]).toEqual([204, "en-US"]);
    });

    it("discloses an AWB's existence through the awb- alias only to who may read its Waybill", async () => {
      const known = `${base}/logistics-objects/awb-${AWB}`;
      const unknown = `${base}/logistics-objects/awb-020-00000011`;
      expect((await oneRecord(known, { token: readerKey })).status).toBe(307);
      expect((await oneRecord(unknown, { token: readerKey })).status).toBe(404);
      expect((await oneRecord(known, { token: subscriberKey })).status).toBe(403);
      expect((await oneRecord(unknown, { token: subscriberKey })).status).toBe(403);
    });

    it("sends Last-Modified on an event list without events: the object's", async () => {
      const target = await createdPiece();
      const object = await oneRecord(target, { token: writerKey });
      for (const method of ["GET", "HEAD"]) {
        const list = await oneRecord(`${target}/logistics-events`, { method, token: writerKey });
        expect(list.status).toBe(200);
        expect(list.headers.get("last-modified")).toBe(object.headers.get("last-modified"));
      }
    });
  });
});
