import { readFileSync } from "node:fs";
import { BUNDLED_STATIONS_FILE } from "../src/stations/station.service";
import type { StationRecord } from "../src/stations/station.view";
import { FastLane } from "../src/http/fast-lane";
import type { App } from "../src/app";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, graphql, postJson } from "./support/http";

const bundled = (JSON.parse(readFileSync(BUNDLED_STATIONS_FILE, "utf8")) as { stations: StationRecord[] }).stations;
const withoutImportAddress = bundled.find((s) => s.import.address === null && s.export.address !== null)!;
const withoutProducts = bundled.find((s) => s.temperatureProducts === null)!;
const withActiveProducts = bundled.find((s) => s.temperatureProducts?.active.available)!;

const STATION_KEYS = [
  "code",
  "name",
  "freighterHandling",
  "passengerAircraftHandling",
  "truckHandling",
  "countryShort",
  "countryLong",
  "import",
  "export",
];
const IMPORT_KEYS = ["address", "contact", "firmsCode", "ciscFee", "storage", "externalComment", "openingHours"];
const EXPORT_KEYS = ["address", "contact", "openingHours"];
const ADDRESS_KEYS = ["street", "streetNo", "building", "zipCode", "city"];
const CONTACT_KEYS = ["generalEmail", "generalPhone", "handlingEmail", "handlingPhone"];

/**
 * The specification's fields that a served station (parsed JSON) lacks, at every level, e.g.
 * "import.address.city". In JSON an unavailable value must be null: absent is the failure (JSON has no undefined).
 */
function absentFields(station: Record<string, any>): string[] {
  const absent = (value: object | null, keys: string[], at: string): string[] =>
    value === null ? [] : keys.filter((key) => !(key in value)).map((key) => `${at}${key}`);
  return [
    ...absent(station, STATION_KEYS, ""),
    ...absent(station.import, IMPORT_KEYS, "import."),
    ...absent(station.export, EXPORT_KEYS, "export."),
    ...["import", "export"].flatMap((side) => [
      ...absent(station[side].address, ADDRESS_KEYS, `${side}.address.`),
      ...absent(station[side].contact, CONTACT_KEYS, `${side}.contact.`),
    ]),
  ];
}

describe.each(BEHAVIOUR_BACKENDS)("station routes on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let url: string;
    let base: string;
    let app: App;
    beforeAll(async () => {
      ({ url, app } = await startApp(backend, disposers));
      base = `${url}/carrier/stations`;
    });
    afterAll(() => disposers.disposeAll());

    it("lists every bundled station code, sorted, on a fresh start", async () => {
      const { status, body } = await getJson(`${base}/stationcodes`);
      expect(status).toBe(200);
      expect(body.length).toBeGreaterThanOrEqual(250);
      expect(body).toEqual(bundled.map((s) => s.code).sort());
    });

    it("returns one station with exactly the specification's fields, nulls never absent", async () => {
      const { status, headers, body } = await getJson(`${base}/station/FRA`);
      expect(status).toBe(200);
      expect(headers.get("content-type")).toMatch(/^application\/json/);
      expect(Object.keys(body)).toEqual(STATION_KEYS);
      expect(Object.keys(body.import)).toEqual(IMPORT_KEYS);
      expect(Object.keys(body.export)).toEqual(EXPORT_KEYS);
      expect(body).toMatchObject({
        code: "FRA",
        name: "Frankfurt Airport",
        countryShort: "DE",
        countryLong: "Germany",
      });
      expect(absentFields(body)).toEqual([]);
    });

    it("serves the export address as the import address where a station gives none", async () => {
      const { body } = await getJson(`${base}/station/${withoutImportAddress.code}`);
      expect(body.import.address).toEqual(withoutImportAddress.export.address);
    });

    it("answers a batch in the order asked with duplicates collapsed", async () => {
      const { status, body } = await postJson(`${base}/station`, { stationCodes: ["JFK", "FRA", "JFK", "SIN"] });
      expect(status).toBe(200);
      expect(body.map((s: { code: string }) => s.code)).toEqual(["JFK", "FRA", "SIN"]);
    });

    it("serves all stations through the batch route, each complete", async () => {
      const codes = bundled.map((s) => s.code);
      expect(codes.length).toBeGreaterThanOrEqual(250);
      for (let i = 0; i < codes.length; i += 100) {
        const { status, body } = await postJson(`${base}/station`, { stationCodes: codes.slice(i, i + 100) });
        expect(status).toBe(200);
        expect(body.map((s: { code: string }) => s.code)).toEqual(codes.slice(i, i + 100));
        // Every station with exactly the specification's top-level fields, in order, and none absent below.
        const incomplete = body.flatMap((station: Record<string, any>) => [
          ...(Object.keys(station).join() === STATION_KEYS.join()
            ? []
            : [`${station.code}: ${Object.keys(station).join()}`]),
          ...absentFields(station).map((field) => `${station.code}: no ${field}`),
        ]);
        expect(incomplete).toEqual([]);
      }
    });

    it("answers 404 naming every unknown code in a batch", async () => {
      const { status, body } = await postJson(`${base}/station`, { stationCodes: ["FRA", "QQQ", "XXZ"] });
      expect(status).toBe(404);
      expect(body).toMatchObject({ code: "STATION_NOT_FOUND", unknownCodes: ["QQQ", "XXZ"] });
      expect(body.detail).toContain("QQQ, XXZ");
    });

    it.each([
      ["an empty list", { stationCodes: [] }, "stationCodes"],
      ["over 100 codes", { stationCodes: Array.from({ length: 101 }, () => "FRA") }, "stationCodes"],
      ["a lower-case code", { stationCodes: ["FRA", "fra"] }, "stationCodes[1]"],
      ["a code of four letters", { stationCodes: ["FRAX"] }, "stationCodes[0]"],
      ["a number for a code", { stationCodes: [123] }, "stationCodes[0]"],
      ["codes that are not a list", { stationCodes: "FRA" }, "stationCodes"],
      ["a missing list", {}, "body.stationCodes"],
      ["an extra field", { stationCodes: ["FRA"], extra: 1 }, "body.extra"],
      ["a body that is a list", ["FRA"], "body"],
    ])("answers 400 for %s", async (_name, payload, field) => {
      const { status, headers, body } = await postJson(`${base}/station`, payload);
      expect(status).toBe(400);
      expect(headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(body.code).toBe("VALIDATION_FAILED");
      expect(body.errors.map((e: { field: string }) => e.field)).toContain(field);
    });

    it("names the list a body without it misses, and does not advise a null it would refuse", async () => {
      const { status, body } = await postJson(`${base}/station`, { codes: ["FRA"] });
      expect(status).toBe(400);
      expect(body.errors).toEqual([
        { field: "body.codes", message: "is not a known field" },
        { field: "body.stationCodes", message: "is missing" },
      ]);
      const asNull = await postJson(`${base}/station`, { stationCodes: null });
      expect([asNull.status, asNull.body.errors[0].field]).toEqual([400, "stationCodes"]);
    });

    it("answers 400 for a malformed code and 404 for an unknown one", async () => {
      expect(await getJson(`${base}/station/fra`)).toMatchObject({
        status: 400,
        body: { code: "VALIDATION_FAILED", errors: [{ field: "IATACode" }] },
      });
      expect(await getJson(`${base}/station/FRAN`)).toMatchObject({ status: 400 });
      expect(await getJson(`${base}/station/QQQ`)).toMatchObject({ status: 404, body: { code: "STATION_NOT_FOUND" } });
      expect(await getJson(`${base}/products/qqq`)).toMatchObject({ status: 400 });
      expect(await getJson(`${base}/products/QQQ`)).toMatchObject({ status: 404, body: { code: "STATION_NOT_FOUND" } });
    });

    it("answers a known station or products read before routing, with exactly the route's answer", async () => {
      // The fast lane (http/fast-lane.ts) answers these over the socket; inject() goes through Fastify's
      // router and the route itself. Apart from the date and the connection, the answers must be equal.
      const answered = jest.spyOn(FastLane.prototype, "answer");
      try {
        for (const path of ["/carrier/stations/station/FRA", `/carrier/stations/products/${withActiveProducts.code}`]) {
          answered.mockClear();
          const headers = { "x-request-id": "same-id-1" };
          const viaLane = await fetch(`${url}${path}`, { headers });
          const laneBody = await viaLane.text();
          expect(answered.mock.results.map((r) => r.value)).toEqual([true]);
          const viaRoute = await app.http.inject({ method: "GET", url: path, headers });
          const comparable = (all: Record<string, unknown>) =>
            Object.fromEntries(
              Object.entries(all).filter(([name]) => !["date", "connection", "keep-alive"].includes(name)),
            );
          expect(viaLane.status).toBe(viaRoute.statusCode);
          expect(laneBody).toBe(viaRoute.body);
          expect(comparable(Object.fromEntries(viaLane.headers))).toEqual(
            comparable(viaRoute.headers as Record<string, unknown>),
          );
        }
        // Anything but a plain 200 read is left to the route, which answers it as before.
        answered.mockClear();
        for (const path of [
          "/carrier/stations/station/QQQ",
          "/carrier/stations/station/fra",
          "/carrier/stations/station/FRA?x=1",
        ])
          await (await fetch(`${url}${path}`)).text();
        expect(answered.mock.results.map((r) => r.value)).toEqual([false, false, false]);
      } finally {
        answered.mockRestore();
      }
    });

    it("returns temperature-controlled products, and available: false where a station has none", async () => {
      const none = await getJson(`${base}/products/${withoutProducts.code}`);
      expect(none.body).toEqual({
        code: withoutProducts.code,
        active: {
          available: false,
          temperatureRanges: [],
          containerTypes: [],
          services: [],
          contact: { email: null, phone: null },
          comment: null,
        },
        passive: {
          available: false,
          temperatureRanges: [],
          containerTypes: [],
          services: [],
          contact: { email: null, phone: null },
          comment: null,
        },
      });
      const some = await getJson(`${base}/products/${withActiveProducts.code}`);
      expect(some.body).toEqual({ code: withActiveProducts.code, ...withActiveProducts.temperatureProducts });
    });

    it("answers the GraphQL station queries like REST", async () => {
      const rest = (await getJson(`${base}/station/SIN`)).body;
      const result = await graphql(
        url,
        `
          {
            stationCodes
            station(code: "SIN") {
              code
              name
              freighterHandling
              passengerAircraftHandling
              truckHandling
              countryShort
              countryLong
              import {
                address {
                  street
                  streetNo
                  building
                  zipCode
                  city
                }
                contact {
                  generalEmail
                  generalPhone
                  handlingEmail
                  handlingPhone
                }
                firmsCode
                ciscFee
                storage
                externalComment
                openingHours {
                  day
                  hours {
                    open
                    close
                  }
                }
              }
              export {
                address {
                  street
                  streetNo
                  building
                  zipCode
                  city
                }
                contact {
                  generalEmail
                  generalPhone
                  handlingEmail
                  handlingPhone
                }
                openingHours {
                  day
                  hours {
                    open
                    close
                  }
                }
              }
            }
            unknown: station(code: "QQQ") {
              code
            }
            stations(codes: ["JFK", "QQQ", "JFK"]) {
              code
              timeZone
              temperatureProducts {
                active {
                  available
                }
              }
            }
          }
        `,
      );
      expect(result.errors).toBeUndefined();
      expect(result.data.stationCodes).toEqual(bundled.map((s) => s.code).sort());
      expect(result.data.station).toEqual(rest);
      expect(result.data.unknown).toBeNull();
      expect(result.data.stations).toEqual([
        { code: "JFK", timeZone: "America/New_York", temperatureProducts: expect.any(Object) },
        null,
        { code: "JFK", timeZone: "America/New_York", temperatureProducts: expect.any(Object) },
      ]);
    });

    it("gives VALIDATION_FAILED for a malformed code in GraphQL", async () => {
      const result = await graphql(
        url,
        `
          {
            station(code: "fra") {
              code
            }
          }
        `,
      );
      expect(result.errors![0].extensions.code).toBe("VALIDATION_FAILED");
      const many = await graphql(
        url,
        `
          query ($c: [String!]!) {
            stations(codes: $c) {
              code
            }
          }
        `,
        { c: Array.from({ length: 101 }, () => "FRA") },
      );
      expect(many.errors![0].extensions.code).toBe("VALIDATION_FAILED");
    });

    it("tells whether a station is open at an instant in its own time zone", async () => {
      const station = bundled.find(
        (s) =>
          s.timeZone === "Europe/Berlin" &&
          s.export.openingHours?.some((d) => d.day === "SUNDAY" && d.hours.length === 0),
      )!;
      expect(station).toBeDefined();
      const monday = station.export.openingHours!.find((d) => d.day === "MONDAY")!.hours[0]!;
      // 2026-11-23 is a Monday; Berlin is UTC+1 in November.
      const [h, m] = monday.open.split(":").map(Number) as [number, number];
      const justOpen = new Date(Date.UTC(2026, 10, 23, h - 1, m)).toISOString();
      const justBefore = new Date(Date.UTC(2026, 10, 23, h - 1, m) - 60_000).toISOString();
      const sunday = "2026-11-22T11:00:00.000Z";
      const result = await graphql(
        url,
        `
          query ($code: String!, $a: DateTimeISO, $b: DateTimeISO, $c: DateTimeISO) {
            station(code: $code) {
              a: openAt(at: $a)
              b: openAt(at: $b)
              c: openAt(at: $c)
            }
          }
        `,
        { code: station.code, a: justOpen, b: justBefore, c: sunday },
      );
      expect(result.errors).toBeUndefined();
      expect(result.data.station).toEqual({ a: true, b: false, c: false });
    });

    it("serves an OpenAPI document and a browsable page for the routes", async () => {
      const { status, body } = await getJson(`${url}/openapi.json`);
      expect(status).toBe(200);
      expect(Object.keys(body.paths)).toEqual(
        expect.arrayContaining([
          "/carrier/stations/stationcodes",
          "/carrier/stations/station",
          "/carrier/stations/station/{IATACode}",
          "/carrier/stations/products/{IATACode}",
        ]),
      );
      const page = await fetch(`${url}/docs/`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain("swagger-ui");
    });
  });
});
