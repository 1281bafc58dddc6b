import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

/**
 * Only blank nodes get the server's embedded ids ("internal:<uuid>"); a node named by an IRI keeps it:
 * another server's object, a code-list element, an ontology individual (docs/ONE-RECORD.md
 * "Logistics objects"). A typed link to one of this server's objects is a link.
 */
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const VAL = "https://onerecord.iata.org/ns/code-lists/SpecialHandlingCode#VAL";
const example = (name: string) =>
  JSON.parse(readFileSync(path.join(__dirname, "examples", name), "utf8")) as Record<string, unknown>;

const piece = (overrides: Record<string, unknown> = {}) => ({
  "@context": { cargo: CARGO },
  "@type": "cargo:Piece",
  "cargo:goodsDescription": "EMBEDDED IDS",
  ...overrides,
});

describe.each(BEHAVIOUR_BACKENDS)("ONE Record embedded node ids on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${app.url()}/onerecord`;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const created = async (body: unknown) => {
      const res = await oneRecord(`${base}/logistics-objects`, { body, token: ADMIN_KEY });
      expect([res.status, res.body]).toEqual([201, undefined]);
      return res.headers.get("location")!;
    };
    const read = async (uri: string) => {
      const res = await oneRecord(uri, { token: ADMIN_KEY });
      expect(res.status).toBe(200);
      await assertConforms(res.body);
      return res.body;
    };

    it("keeps a code-list element's and another server's IRI, typed or not", async () => {
      const other = "https://other.example/logistics-objects/x";
      const uri = await created(
        piece({
          "cargo:specialHandlingCodes": { "@id": VAL, "@type": "cargo:CodeListElement" },
          "cargo:containedItems": { "@id": other, "@type": "cargo:Item" },
        }),
      );
      const body = await read(uri);
      expect(body["cargo:specialHandlingCodes"]["@id"]).toBe(VAL);
      expect(body["cargo:containedItems"]["@id"]).toBe(other);
    });

    it("takes a typed link to one of this server's objects as a link, and refuses redefining it (400)", async () => {
      const target = await created(piece({ "cargo:goodsDescription": "TARGET" }));
      const linking = await read(
        await created(piece({ "cargo:containedPieces": { "@id": target, "@type": "cargo:Piece" } })),
      );
      expect(linking["cargo:containedPieces"]).toEqual({ "@id": target });
      const redefining = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: piece({
          "cargo:containedPieces": { "@id": target, "@type": "cargo:Piece", "cargo:goodsDescription": "MINE" },
        }),
      });
      expect(redefining.status).toBe(400);
      expect(JSON.stringify(redefining.body)).toContain(`${target} is another logistics object`);
    });

    it("still names blank nodes itself: labels and client-given internal: ids are renamed, one id per label", async () => {
      const uri = await created(
        piece({
          "cargo:grossWeight": {
            "@id": "internal:mine",
            "@type": "cargo:Value",
            "cargo:numericalValue": 1.5,
            "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
          },
        }),
      );
      const body = await read(uri);
      expect(body["cargo:grossWeight"]["@id"]).toMatch(/^internal:[0-9a-f-]{36}$/);
    });

    it("stores the specification's LogisticsEvent.json with cargo:ACTUAL and the recording organization's @id", async () => {
      const target = await created({ "@context": { cargo: CARGO }, "@type": "cargo:Shipment" });
      const event = example("LogisticsEvent.json");
      // The example's Shipment is on its author's server: the same typed link, to this server's Shipment.
      event["cargo:eventFor"] = { "@type": "cargo:Shipment", "@id": target };
      const posted = await oneRecord(`${target}/logistics-events`, { method: "POST", body: event, token: ADMIN_KEY });
      expect([posted.status, posted.body]).toEqual([201, undefined]);
      const stored = await read(posted.headers.get("location")!);
      expect(stored["cargo:eventTimeType"]["@id"]).toBe("cargo:ACTUAL");
      expect(stored["cargo:recordingOrganization"]["@id"]).toBe(
        (event["cargo:recordingOrganization"] as Record<string, string>)["@id"],
      );
    });

    it("refuses an event that describes one of this server's objects instead of linking it (400, nothing stored)", async () => {
      const target = await created({ "@context": { cargo: CARGO }, "@type": "cargo:Shipment" });
      const carrier = `${base}/logistics-objects/organization-carrier`;
      const event = {
        "@context": { cargo: CARGO },
        "@type": "cargo:LogisticsEvent",
        "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-10-16T15:45:00Z" },
        "cargo:recordingOrganization": { "@id": carrier, "@type": "cargo:Organization", "cargo:name": "Mallory" },
      };
      const refused = await oneRecord(`${target}/logistics-events`, { method: "POST", body: event, token: ADMIN_KEY });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(`${carrier} is a logistics object of this server`);
      expect((await read(`${target}/logistics-events`))["api:hasTotalItems"]).toBe(0);
      // The same node as a link is taken, and reads back as the link it is.
      const linked = { ...event, "cargo:recordingOrganization": { "@id": carrier, "@type": "cargo:Organization" } };
      const posted = await oneRecord(`${target}/logistics-events`, { method: "POST", body: linked, token: ADMIN_KEY });
      expect(posted.status).toBe(201);
      expect((await read(posted.headers.get("location")!))["cargo:recordingOrganization"]).toEqual({ "@id": carrier });
    });

    it("keeps a typed StatusCode eventCode's IRI, and ?event-code= finds it", async () => {
      const shipment = `${base}/logistics-objects/shipment-020-55500012`;
      const posted = await oneRecord(`${shipment}/logistics-events`, {
        method: "POST",
        token: ADMIN_KEY,
        body: {
          "@context": { cargo: CARGO },
          "@type": "cargo:StatusUpdateEvent",
          "cargo:eventCode": { "@id": `${STATUS}NFD`, "@type": "cargo:CodeListElement" },
          "cargo:eventDate": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2026-10-16T15:45:00Z" },
          "cargo:eventTimeType": { "@id": "cargo:ACTUAL", "@type": "cargo:EventTimeType" },
        },
      });
      expect(posted.status).toBe(201);
      expect((await read(posted.headers.get("location")!))["cargo:eventCode"]["@id"]).toBe(`${STATUS}NFD`);
      const found = await read(`${shipment}/logistics-events?event-code=NFD`);
      const items = [found["api:hasItem"]].flat();
      expect(items.map((item: Record<string, any>) => item["cargo:eventCode"]["@id"])).toEqual([`${STATUS}NFD`]);
    });
  });
});
