/**
 * What the events API reads from clients, without a server: a posted event (in each JSON-LD form, read
 * by jsonld-codec.ts) and the list's query parameters.
 */
import jsonld from "jsonld";
import { AppError } from "../../src/errors";
import { readEventListQuery } from "../../src/onerecord/events/event-query";
import { readPostedEvent } from "../../src/onerecord/events/posted-event";
import { readJsonLdObject } from "../../src/onerecord/jsonld-codec";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const XSD = "http://www.w3.org/2001/XMLSchema#";
const SHIPMENT = "https://gateway.example/onerecord/logistics-objects/shipment-020-12345675";
const target = { uri: SHIPMENT, type: `${CARGO}Shipment` };
const noFetch = async (url: string): Promise<never> => {
  throw new Error(`no fetch: ${url}`);
};

const compacted = (overrides: Record<string, unknown> = {}) => ({
  "@context": { cargo: CARGO, xsd: XSD },
  "@type": "cargo:StatusUpdateEvent",
  "cargo:eventCode": { "@id": `${STATUS}DEP` },
  "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-16T15:45:00Z" },
  "cargo:eventLocation": { "@type": "cargo:Location", "cargo:locationName": "Frankfurt" },
  ...overrides,
});

/** The problems a refusal names: property (IRI, or @type) and message. */
async function problemsOf(body: object, to = target): Promise<Record<string, string>> {
  try {
    readPostedEvent(await readJsonLdObject(body), to);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    expect(error.code).toBe("INVALID_LOGISTICS_OBJECT");
    return Object.fromEntries((error.errors ?? []).map((e) => [e.field, e.message]));
  }
  throw new Error("not refused");
}

describe("a posted event", () => {
  test("is read the same from its compacted, expanded and flattened forms", async () => {
    const body = compacted();
    const expanded = await jsonld.expand(body, { documentLoader: noFetch });
    const flattened = await jsonld.flatten(body, {}, { documentLoader: noFetch });
    const read = await Promise.all(
      [body, expanded, flattened].map(async (form) => readPostedEvent(await readJsonLdObject(form), target)),
    );
    for (const event of read) {
      expect(event).toMatchObject({
        type: `${CARGO}StatusUpdateEvent`,
        eventDate: new Date("2026-10-16T15:45:00Z"),
        codeIri: `${STATUS}DEP`,
        statusCode: "DEP",
        timeType: undefined,
        clientId: null,
        locationUri: null,
      });
      expect(event.node["@type"]).toEqual([`${CARGO}StatusUpdateEvent`, `${CARGO}LogisticsEvent`]);
    }
    expect(JSON.stringify(read[1]!.node)).toBe(JSON.stringify(read[0]!.node));
    expect(JSON.stringify(read[2]!.node)).toBe(JSON.stringify(read[0]!.node));
  });

  test("keeps its own @id as the client's id, and drops what the server sets (eventFor, creationDate)", async () => {
    const event = readPostedEvent(
      await readJsonLdObject(
        compacted({
          "@id": "urn:uuid:7b1c",
          "cargo:eventFor": { "@id": SHIPMENT },
          "cargo:creationDate": { "@type": "xsd:dateTime", "@value": "2020-01-01T00:00:00Z" },
          "cargo:eventLocation": { "@id": "https://gateway.example/onerecord/logistics-objects/location-FRA" },
        }),
      ),
      target,
    );
    expect(event.clientId).toBe("urn:uuid:7b1c");
    expect(event.locationUri).toBe("https://gateway.example/onerecord/logistics-objects/location-FRA");
    expect(Object.keys(event.node)).not.toEqual(expect.arrayContaining([`${CARGO}eventFor`]));
    expect(event.node["@id"]).toBeUndefined();
    expect(event.node[`${CARGO}creationDate`]).toBeUndefined();
  });

  test("takes a plain LogisticsEvent with another code list's code, on any object", async () => {
    const event = readPostedEvent(
      await readJsonLdObject(
        compacted({
          "@type": "cargo:LogisticsEvent",
          "cargo:eventCode": { "@id": "https://forwarder.example/codes#GATE-IN" },
        }),
      ),
      { uri: "https://gateway.example/onerecord/logistics-objects/piece-1", type: `${CARGO}Piece` },
    );
    expect(event).toMatchObject({ type: `${CARGO}LogisticsEvent`, statusCode: null });
  });

  test("refuses each problem at once, naming its property", async () => {
    expect(
      await problemsOf(
        compacted({
          "cargo:eventDate": undefined,
          "cargo:eventCode": { "@id": `${STATUS}TOA` },
          "cargo:eventTimeType": { "@id": "cargo:SOON" },
          "cargo:eventFor": { "@id": "https://elsewhere.example/shipment" },
        }),
      ),
    ).toEqual({
      [`${CARGO}eventDate`]: expect.stringMatching(/is required, once/),
      [`${CARGO}eventCode`]: expect.stringMatching(/StatusCode#TOA is not a member of StatusCode/),
      [`${CARGO}eventTimeType`]: expect.stringMatching(/must be one of cargo:ACTUAL/),
      [`${CARGO}eventFor`]: expect.stringMatching(/must be the object the event is posted to/),
    });
  });

  test("refuses an eventDate that is no xsd:dateTime, a non-event, an unknown IATA code, a StatusUpdateEvent not for a Shipment", async () => {
    expect(await problemsOf(compacted({ "cargo:eventDate": "2026-10-16T15:45:00Z" }))).toEqual({
      [`${CARGO}eventDate`]: expect.stringMatching(/must be an .*dateTime literal/),
    });
    expect(
      await problemsOf(compacted({ "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-02-30T00:00:00Z" } })),
    ).toEqual({
      [`${CARGO}eventDate`]: expect.stringMatching(/calendar/),
    });
    expect(await problemsOf(compacted({ "@type": "cargo:Piece" }))).toEqual({
      "@type": expect.stringMatching(/must be a .*LogisticsEvent/),
    });
    expect(
      await problemsOf(
        compacted({
          "@type": "cargo:LogisticsEvent",
          "cargo:eventCode": { "@id": "https://onerecord.iata.org/ns/code-lists/SomeList#X" },
        }),
      ),
    ).toEqual({ [`${CARGO}eventCode`]: expect.stringMatching(/in IATA's code lists/) });
    expect(await problemsOf(compacted(), { uri: SHIPMENT, type: `${CARGO}Piece` })).toEqual({
      "@type": expect.stringMatching(/is for a Shipment/),
    });
  });
});

describe("the list's query parameters", () => {
  test("default to every event in the order stored, at most 1,000", () => {
    expect(readEventListQuery({})).toEqual({
      codes: null,
      createdAfter: null,
      createdBefore: null,
      occurredAfter: null,
      occurredBefore: null,
      sort: "ASC-creationDate",
      limit: 1_000,
      skip: 0,
    });
  });

  test("read codes comma-separated (repeated too), the specification's timestamps, sort, limit and skip", () => {
    expect(
      readEventListQuery({
        "event-code": ["DEP, ARR", `${STATUS}FOH`],
        "created-after": "20190926T075830Z",
        "occurred-before": "2019-09-26T09:58:30+02:00",
        sort: "DESC-eventDate",
        limit: "20",
        skip: "40",
      }),
    ).toMatchObject({
      codes: ["DEP", "ARR", `${STATUS}FOH`],
      createdAfter: new Date("2019-09-26T07:58:30Z"),
      occurredBefore: new Date("2019-09-26T07:58:30Z"),
      sort: "DESC-eventDate",
      limit: 20,
      skip: 40,
    });
  });

  test("read an offset whose literal + the query string decoded as a space as that + (20190926T095830+0200)", () => {
    expect(
      readEventListQuery({
        "created-after": "20190926T095830 0200",
        "created-before": "2019-09-26T09:58:30 02:00",
        "occurred-after": "20190926T095830.5 0200",
      }),
    ).toMatchObject({
      createdAfter: new Date("2019-09-26T07:58:30Z"),
      createdBefore: new Date("2019-09-26T07:58:30Z"),
      occurredAfter: new Date("2019-09-26T07:58:30.5Z"),
    });
    for (const spaced of ["20190926T095830  0200", "20190926 T095830Z", "20190926T095830 02"])
      expect(() => readEventListQuery({ "created-after": spaced })).toThrow(AppError);
  });

  test("refuse every bad parameter at once as INVALID_QUERY_PARAMETER, naming each", () => {
    let error: unknown;
    try {
      readEventListQuery({
        "event-code": "DEP,,ARR",
        "created-after": "20190931T075830Z",
        sort: "newest",
        limit: "1001",
        skip: "-1",
        page: "2",
        "occurred-after": ["20190926T075830Z", "20190926T075830Z"],
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe("INVALID_QUERY_PARAMETER");
    expect((error as AppError).errors?.map((e) => e.field).sort()).toEqual(
      ["created-after", "event-code", "limit", "occurred-after", "page", "skip", "sort"].sort(),
    );
  });
});
