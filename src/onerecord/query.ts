import type { FastifyRequest } from "fastify";
import { AppError } from "../errors";
import { API } from "./jsonld-context";
import api from "./vocabulary/api.json";

/** A request's query parameters, each given at most once (a repeated one is refused). */
export function queryOf(request: FastifyRequest): Record<string, string | undefined> {
  const query = (request.query ?? {}) as Record<string, string | string[] | undefined>;
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(query)) {
    if (Array.isArray(value)) throw invalidQuery(name, "is given more than once");
    out[name] = value;
  }
  return out;
}

const QUERY_TIME = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

/** Year, month (1-12), day, hours, minutes, seconds as a UTC time; Date.UTC would read years 0–99 as 1900–1999. */
function utcTime([year = 0, month = 1, day = 1, hours = 0, minutes = 0, seconds = 0]: number[]): Date {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hours, minutes, seconds, 0);
  return date;
}

/**
 * A date and time in the specification's query form, ISO 8601 basic in UTC: "20260926T075830Z";
 * undefined when absent. With `notAfterNow`, a time in the future is refused (the specification's
 * `at`).
 */
export function parseQueryTime(
  value: string | undefined,
  name: string,
  { notAfterNow = false }: { notAfterNow?: boolean } = {},
): { date: Date; endOfSecond: Date; text: string } | undefined {
  if (value === undefined) return undefined;
  const match = QUERY_TIME.exec(value);
  const date = match ? utcTime(match.slice(1, 7).map(Number)) : undefined;
  if (
    !match ||
    !date ||
    Number.isNaN(date.getTime()) ||
    date.toISOString().slice(0, 19).replace(/[-:]/g, "") !== value.slice(0, 15)
  )
    throw invalidQuery(name, `is a UTC time such as 20260926T075830Z (YYYYMMDDThhmmssZ), got ${JSON.stringify(value)}`);
  if (notAfterNow && date.getTime() > Date.now()) throw invalidQuery(name, `is in the future: ${value}`);
  // The whole second named: a state written at 07:58:30.500 is the state "at 20260926T075830Z".
  return { date, endOfSecond: new Date(date.getTime() + 999), text: value };
}

const REQUEST_STATUSES = new Set(
  api.enumerations[`${API}RequestStatus` as keyof typeof api.enumerations].members.map((m) => m.label),
);

/** `status`: REQUEST_PENDING or its IRI, comma separated; null when absent. */
export function parseStatuses(value: string | undefined): string[] | null {
  if (value === undefined) return null;
  return value.split(",").map((part) => {
    const status = part.trim().replace(API, "").replace(/^api:/, "");
    if (!REQUEST_STATUSES.has(status))
      throw invalidQuery(
        "status",
        `is a request status such as REQUEST_ACCEPTED (or its IRI), got ${JSON.stringify(part)}`,
      );
    return status;
  });
}

export function invalidQuery(name: string, message: string): AppError {
  return new AppError("INVALID_QUERY_PARAMETER", `${name} ${message}`, { errors: [{ field: name, message }] });
}
