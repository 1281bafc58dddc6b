import { Checker, join } from "../domain/checker";
import type { FieldError } from "../errors";
import { isValidTimeZone } from "../domain/opening-hours";
import { IATA_CODE_PATTERN } from "../domain/iata";
import { WEEKDAYS, type StationRecord } from "./station.view";

const STATION_KEYS = [
  "code",
  "name",
  "freighterHandling",
  "passengerAircraftHandling",
  "truckHandling",
  "countryShort",
  "countryLong",
  "timeZone",
  "import",
  "export",
  "temperatureProducts",
] as const;
const ADDRESS_KEYS = ["street", "streetNo", "building", "zipCode", "city"] as const;
const CONTACT_KEYS = ["generalEmail", "generalPhone", "handlingEmail", "handlingPhone"] as const;
const IMPORT_KEYS = [
  "address",
  "contact",
  "firmsCode",
  "ciscFee",
  "storage",
  "externalComment",
  "openingHours",
] as const;
const EXPORT_KEYS = ["address", "contact", "openingHours"] as const;
const PRODUCT_KEYS = ["available", "temperatureRanges", "containerTypes", "services", "contact", "comment"] as const;
const TIME = /^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[0-9 ()./-]{3,40}$/;
export const MAX_STATIONS_PER_FILE = 10_000;

export type StationFileResult = { ok: true; stations: StationRecord[] } | { ok: false; problems: FieldError[] };

/**
 * Validates a station file: a JSON array of station records, or `{ "stations": [...] }` (top-level keys
 * starting with "_" are comments). Every problem is reported, each naming the record and the field.
 */
export function validateStationFile(input: unknown): StationFileResult {
  const check = new Checker();
  let list: unknown = input;
  if (typeof input === "object" && input !== null && !Array.isArray(input)) {
    const { stations, ...rest } = input as Record<string, unknown>;
    for (const key of Object.keys(rest))
      if (!key.startsWith("_")) check.fail(key, 'is not a known field (expected "stations")');
    list = stations;
  }
  const records = check.array(list, "stations", { max: MAX_STATIONS_PER_FILE });
  if (records !== null && records.length === 0) check.fail("stations", "must hold at least one station");
  const seen = new Map<string, number>();
  (records ?? []).forEach((record, index) => {
    const code =
      typeof (record as { code?: unknown } | null)?.code === "string" ? (record as { code: string }).code : "?";
    const field = `stations[${index}] (${code})`;
    checkStation(check, record, field);
    const earlier = seen.get(code);
    if (earlier !== undefined) check.fail(join(field, "code"), `repeats the code of stations[${earlier}]`);
    else seen.set(code, index);
  });
  return check.ok ? { ok: true, stations: records as StationRecord[] } : { ok: false, problems: check.problems };
}

function checkStation(check: Checker, value: unknown, field: string): void {
  const station = check.object(value, field, STATION_KEYS);
  if (!station) return;
  check.string(station.code, join(field, "code"), { pattern: IATA_CODE_PATTERN, hint: "three upper-case letters" });
  check.string(station.name, join(field, "name"), { maxLength: 200 });
  for (const key of ["freighterHandling", "passengerAircraftHandling", "truckHandling"] as const)
    check.boolean(station[key], join(field, key), { nullable: true });
  check.string(station.countryShort, join(field, "countryShort"), {
    nullable: true,
    pattern: /^[A-Z]{2}$/,
    hint: "an ISO 3166-1 alpha-2 code",
  });
  check.string(station.countryLong, join(field, "countryLong"), { nullable: true, maxLength: 100 });
  const timeZone = check.string(station.timeZone, join(field, "timeZone"), { nullable: true, maxLength: 64 });
  if (timeZone !== null && !isValidTimeZone(timeZone))
    check.fail(join(field, "timeZone"), `is not an IANA time zone: ${JSON.stringify(timeZone)}`);

  const imp = check.object(station.import, join(field, "import"), IMPORT_KEYS);
  if (imp) {
    const f = join(field, "import");
    checkAddress(check, imp.address, join(f, "address"));
    checkContact(check, imp.contact, join(f, "contact"));
    check.string(imp.firmsCode, join(f, "firmsCode"), {
      nullable: true,
      pattern: /^[A-Z0-9]{4}$/,
      hint: "a four-character FIRMS code",
    });
    check.string(imp.ciscFee, join(f, "ciscFee"), { nullable: true, maxLength: 50 });
    check.string(imp.storage, join(f, "storage"), { nullable: true, maxLength: 1000 });
    check.string(imp.externalComment, join(f, "externalComment"), { nullable: true, maxLength: 2000 });
    checkOpeningHours(check, imp.openingHours, join(f, "openingHours"));
  }
  const exp = check.object(station.export, join(field, "export"), EXPORT_KEYS);
  if (exp) {
    const f = join(field, "export");
    checkAddress(check, exp.address, join(f, "address"));
    checkContact(check, exp.contact, join(f, "contact"));
    checkOpeningHours(check, exp.openingHours, join(f, "openingHours"));
  }
  if (station.temperatureProducts !== null) {
    const products = check.object(station.temperatureProducts, join(field, "temperatureProducts"), [
      "active",
      "passive",
    ]);
    if (products)
      for (const kind of ["active", "passive"] as const)
        checkProduct(check, products[kind], join(join(field, "temperatureProducts"), kind));
  }
}

function checkAddress(check: Checker, value: unknown, field: string): void {
  if (value === null) return;
  const address = check.object(value, field, ADDRESS_KEYS);
  if (address)
    for (const key of ADDRESS_KEYS) check.string(address[key], join(field, key), { nullable: true, maxLength: 200 });
}

function checkContact(check: Checker, value: unknown, field: string): void {
  if (value === null) return;
  const contact = check.object(value, field, CONTACT_KEYS);
  if (!contact) return;
  check.string(contact.generalEmail, join(field, "generalEmail"), {
    nullable: true,
    pattern: EMAIL,
    hint: "an e-mail address",
  });
  check.string(contact.handlingEmail, join(field, "handlingEmail"), {
    nullable: true,
    pattern: EMAIL,
    hint: "an e-mail address",
  });
  check.string(contact.generalPhone, join(field, "generalPhone"), {
    nullable: true,
    pattern: PHONE,
    hint: "a phone number",
  });
  check.string(contact.handlingPhone, join(field, "handlingPhone"), {
    nullable: true,
    pattern: PHONE,
    hint: "a phone number",
  });
}

function checkOpeningHours(check: Checker, value: unknown, field: string): void {
  if (value === null) return;
  const days = check.array(value, field, { max: 7 });
  const seen = new Set<string>();
  days?.forEach((entry, i) => {
    const f = join(field, i);
    const day = check.object(entry, f, ["day", "hours"]);
    if (!day) return;
    const name = check.string(day.day, join(f, "day"), {
      pattern: new RegExp(`^(${WEEKDAYS.join("|")})$`),
      hint: "MONDAY … SUNDAY",
    });
    if (name !== null && seen.has(name)) check.fail(join(f, "day"), `repeats ${name}`);
    if (name !== null) seen.add(name);
    const hours = check.array(day.hours, join(f, "hours"), { max: 12 });
    let lastClose = "";
    hours?.forEach((interval, j) => {
      const g = join(join(f, "hours"), j);
      const span = check.object(interval, g, ["open", "close"]);
      if (!span) return;
      const open = check.string(span.open, join(g, "open"), { pattern: TIME, hint: "HH:mm (00:00 to 23:59)" });
      const close = check.string(span.close, join(g, "close"), { pattern: TIME, hint: "HH:mm (00:01 to 24:00)" });
      if (open === null || close === null || !TIME.test(open) || !TIME.test(close)) return;
      if (open === "24:00") check.fail(join(g, "open"), "cannot be 24:00");
      else if (close <= open)
        check.fail(g, `closes (${close}) before it opens (${open}); split an overnight interval at 24:00`);
      else if (open < lastClose) check.fail(g, "overlaps the interval before it (intervals must be in order)");
      lastClose = close;
    });
  });
}

function checkProduct(check: Checker, value: unknown, field: string): void {
  const product = check.object(value, field, PRODUCT_KEYS);
  if (!product) return;
  check.boolean(product.available, join(field, "available"));
  check.array(product.temperatureRanges, join(field, "temperatureRanges"), { max: 20 })?.forEach((range, i) => {
    const f = join(join(field, "temperatureRanges"), i);
    const r = check.object(range, f, ["min", "max"]);
    if (!r) return;
    const min = check.number(r.min, join(f, "min"), { min: -100, max: 100 });
    const max = check.number(r.max, join(f, "max"), { min: -100, max: 100 });
    if (min !== null && max !== null && min > max) check.fail(f, `min (${min}) is above max (${max})`);
  });
  check.array(product.containerTypes, join(field, "containerTypes"), { max: 50 })?.forEach((t, i) =>
    check.string(t, join(join(field, "containerTypes"), i), {
      pattern: /^[A-Z0-9]{2,5}$/,
      hint: "a ULD type code such as RKN",
    }),
  );
  check
    .array(product.services, join(field, "services"), { max: 50 })
    ?.forEach((s, i) => check.string(s, join(join(field, "services"), i), { maxLength: 200 }));
  const contact = check.object(product.contact, join(field, "contact"), ["email", "phone"]);
  if (contact) {
    check.string(contact.email, join(join(field, "contact"), "email"), {
      nullable: true,
      pattern: EMAIL,
      hint: "an e-mail address",
    });
    check.string(contact.phone, join(join(field, "contact"), "phone"), {
      nullable: true,
      pattern: PHONE,
      hint: "a phone number",
    });
  }
  check.string(product.comment, join(field, "comment"), { nullable: true, maxLength: 2000 });
}
