import { randomUUID } from "node:crypto";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const API = "https://onerecord.iata.org/ns/api#";
const XSD = "http://www.w3.org/2001/XMLSchema#";
const CONTEXT = { cargo: CARGO, api: API, xsd: XSD };

describe.each(BEHAVIOUR_BACKENDS)(
  "ONE Record bodies against the ontology's ranges and cardinalities on %s",
  (backend) => {
    describeBackend(backend)(`over ${backend}`, () => {
      const disposers = new Disposers();
      let app: App;
      let base: string;

      const get = (uri: string) => oneRecord(uri, { token: ADMIN_KEY });
      /** Expects a 400 api:Error naming the property, saying what was expected. */
      const expectRefused = async (
        res: { status: number; body: Record<string, unknown> },
        property: string,
        expected: string,
      ) => {
        expect(res.status).toBe(400);
        await assertConforms(res.body);
        expect(res.body["api:hasErrorDetail"]).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              "api:hasProperty": property,
              "api:hasMessage": expect.stringContaining(expected) as string,
            }),
          ]),
        );
      };

      beforeAll(async () => {
        ({ app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
        base = `${app.url()}/onerecord`;
      });
      afterAll(() => disposers.disposeAll());

      it.each([
        ["slac", { "cargo:slac": "many" }, "xsd:integer"],
        ["grossWeight", { "cargo:grossWeight": "heavy" }, "a node or an IRI"],
        ["coload", { "cargo:coload": "maybe" }, "xsd:boolean"],
        ["goodsDescription", { "cargo:goodsDescription": ["one", "two"] }, "at most 1"],
      ])("refuses a Piece whose %s the ontology does not allow, and stores nothing", async (name, extra, expected) => {
        const uri = `${base}/logistics-objects/${randomUUID()}`;
        const res = await oneRecord(`${base}/logistics-objects`, {
          token: ADMIN_KEY,
          body: { "@context": CONTEXT, "@id": uri, "@type": "cargo:Piece", ...extra },
        });
        await expectRefused(res, `${CARGO}${name}`, expected);
        expect((await get(uri)).status).toBe(404);
      });

      it("refuses an event whose recordedPieceCount is no integer, and stores nothing", async () => {
        const piece = await oneRecord(`${base}/logistics-objects`, {
          token: ADMIN_KEY,
          body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
        });
        expect(piece.status).toBe(201);
        const events = `${piece.headers.get("location")!}/logistics-events`;
        const res = await oneRecord(events, {
          method: "POST",
          token: ADMIN_KEY,
          body: {
            "@context": CONTEXT,
            "@type": "cargo:LogisticsEvent",
            "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-14T08:00:00Z" },
            "cargo:recordedPieceCount": "lots",
          },
        });
        await expectRefused(res, `${CARGO}recordedPieceCount`, "xsd:integer");
        expect((await get(events)).body["api:hasTotalItems"]).toBe(0);
      });

      it("refuses a Change that adds a second goodsDescription (max 1): 400, no request, the object unchanged", async () => {
        const piece = await oneRecord(`${base}/logistics-objects`, {
          token: ADMIN_KEY,
          body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
        });
        const uri = piece.headers.get("location")!;
        const res = await oneRecord(uri, {
          method: "PATCH",
          token: ADMIN_KEY,
          body: {
            "@context": CONTEXT,
            "@type": "api:Change",
            "api:hasLogisticsObject": { "@id": uri },
            "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "1" },
            "api:hasOperation": {
              "@type": "api:Operation",
              "api:op": { "@id": "api:ADD" },
              "api:s": uri,
              "api:p": `${CARGO}goodsDescription`,
              "api:o": {
                "@type": "api:OperationObject",
                "api:hasDatatype": `${XSD}string`,
                "api:hasValue": "MAGAZINES",
              },
            },
          },
        });
        await expectRefused(res, `${CARGO}goodsDescription`, "at most 1");
        const read = await get(uri);
        expect([read.headers.get("revision"), read.body["cargo:goodsDescription"]]).toEqual(["1", "BOOKS"]);
        expect((await get(`${uri}/audit-trail`)).body["api:hasActionRequest"]).toBeUndefined();
      });
    });
  },
);
