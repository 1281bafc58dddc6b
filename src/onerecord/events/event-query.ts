import { Checker } from "../../domain/checker";
import { readIsoInstant } from "../../domain/instant";
import { AppError } from "../../errors";

/**
 * The filters and paging of `GET …/logistics-events` (the specification's query parameters), read
 * from the query string. Every problem is reported at once, each naming its parameter.
 */
export interface EventListQuery {
  /** Texts one of which the event code's IRI must contain ("DEP", or a full IRI); null: any event. */
  readonly codes: readonly string[] | null;
  /** Strict bounds on the event's creationDate and eventDate. */
  readonly createdAfter: Date | null;
  readonly createdBefore: Date | null;
  readonly occurredAfter: Date | null;
  readonly occurredBefore: Date | null;
  readonly sort: EventSort;
  readonly limit: number;
  readonly skip: number;
}

export type EventSort = "ASC-creationDate" | "DESC-creationDate" | "ASC-eventDate" | "DESC-eventDate";
export const EVENT_SORTS: readonly EventSort[] = [
  "ASC-creationDate",
  "DESC-creationDate",
  "ASC-eventDate",
  "DESC-eventDate",
];

/** An event store is an append-only log: by default its events come in the order they were stored. */
export const DEFAULT_EVENT_SORT: EventSort = "ASC-creationDate";
/** The most events one answer lists (and the default), as the legacy history's 1,000. */
export const MAX_EVENTS_PER_PAGE = 1_000;
const MAX_SKIP = 1_000_000_000;
const MAX_CODES = 50;

const PARAMETERS = [
  "event-code",
  "created-after",
  "created-before",
  "occurred-after",
  "occurred-before",
  "sort",
  "limit",
  "skip",
] as const;

/** The query of a list, or INVALID_QUERY_PARAMETER naming every parameter at fault. */
export function readEventListQuery(query: Readonly<Record<string, unknown>>): EventListQuery {
  const check = new Checker();
  for (const name of Object.keys(query))
    if (!(PARAMETERS as readonly string[]).includes(name))
      check.fail(name, `is not a parameter of the logistics events list (${PARAMETERS.join(", ")})`);
  const read = {
    codes: codesOf(check, query["event-code"]),
    createdAfter: instantOf(check, query, "created-after"),
    createdBefore: instantOf(check, query, "created-before"),
    occurredAfter: instantOf(check, query, "occurred-after"),
    occurredBefore: instantOf(check, query, "occurred-before"),
    sort: sortOf(check, single(check, query, "sort")),
    limit: integerOf(check, query, "limit", { min: 1, max: MAX_EVENTS_PER_PAGE, fallback: MAX_EVENTS_PER_PAGE }),
    skip: integerOf(check, query, "skip", { min: 0, max: MAX_SKIP, fallback: 0 }),
  };
  if (!check.ok)
    throw new AppError("INVALID_QUERY_PARAMETER", check.problems.map((p) => `${p.field} ${p.message}`).join("; "), {
      errors: check.problems,
    });
  return read;
}

/** A parameter given once (a string), or undefined; given twice is a problem. */
function single(check: Checker, query: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string") {
    check.fail(name, "must be given once");
    return undefined;
  }
  return value;
}

function codesOf(check: Checker, value: unknown): string[] | null {
  if (value === undefined) return null;
  const given = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === "string");
  const codes = given.flatMap((v) => v.split(",")).map((c) => c.trim());
  if (codes.length === 0 || codes.some((c) => c === "")) {
    check.fail("event-code", 'must be event codes separated by commas, e.g. "DEP,ARR" or a code\'s full IRI');
    return null;
  }
  if (codes.length > MAX_CODES) check.fail("event-code", `must name at most ${MAX_CODES} codes, got ${codes.length}`);
  return [...new Set(codes)];
}

/** The specification's form "20190926T075830Z", or ISO 8601's extended form with an offset. */
const BASIC_INSTANT = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\.\d{1,9})?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * A positive offset written with a literal "+" in a URL ("…T075830+0200") arrives as a space, as a
 * query string decodes "+": a space before a trailing offset is read as the "+" it was meant to be.
 */
const SPACED_OFFSET = / (\d{2}:?\d{2})$/;

function instantOf(check: Checker, query: Readonly<Record<string, unknown>>, name: string): Date | null {
  const given = single(check, query, name);
  if (given === undefined) return null;
  const text = given.replace(SPACED_OFFSET, "+$1");
  const basic = BASIC_INSTANT.exec(text);
  const iso = basic
    ? `${basic[1]}-${basic[2]}-${basic[3]}T${basic[4]}:${basic[5]}:${basic[6]}${basic[7] ?? ""}${basic[8]}`
    : text;
  const read = readIsoInstant(iso);
  if ("at" in read) return read.at;
  check.fail(name, `must be a UTC timestamp such as 20190926T075830Z, got ${JSON.stringify(given)}`);
  return null;
}

function sortOf(check: Checker, text: string | undefined): EventSort {
  if (text === undefined) return DEFAULT_EVENT_SORT;
  if ((EVENT_SORTS as readonly string[]).includes(text)) return text as EventSort;
  check.fail("sort", `must be one of ${EVENT_SORTS.join(", ")}, got ${JSON.stringify(text)}`);
  return DEFAULT_EVENT_SORT;
}

function integerOf(
  check: Checker,
  query: Readonly<Record<string, unknown>>,
  name: string,
  { min, max, fallback }: { min: number; max: number; fallback: number },
): number {
  const text = single(check, query, name);
  if (text === undefined) return fallback;
  const value = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  if (Number.isInteger(value) && value >= min && value <= max) return value;
  check.fail(name, `must be a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return fallback;
}
