/**
 * The instants the gateway accepts from callers and carrier messages: real calendar dates, offsets
 * within ±14:00 (the widest any time zone uses; xsd:dateTime's bound too), and years 1900 to 9999 —
 * so that what is accepted is always what PostgreSQL stores and ISO 8601 writes back in four digits.
 */

/** 1900-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z, in milliseconds. */
export const EARLIEST_INSTANT_MS = Date.UTC(1900, 0, 1);
export const LATEST_INSTANT_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

export const INSTANT_RANGE = "from 1900-01-01T00:00:00Z to 9999-12-31T23:59:59Z";

export function isRealDate(year: number, month: number, day: number): boolean {
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

export function isAcceptedInstant(at: Date): boolean {
  const ms = at.getTime();
  return ms >= EARLIEST_INSTANT_MS && ms <= LATEST_INSTANT_MS;
}

/** Minutes east of UTC of "Z", "+02:00" or "-0530"; null past ±14:00 or with minutes past 59. */
export function offsetMinutes(offset: string): number | null {
  if (offset === "Z") return 0;
  const match = /^([+-])(\d{2}):?(\d{2})$/.exec(offset);
  if (!match) return null;
  const [hours, minutes] = [Number(match[2]), Number(match[3])];
  const total = hours * 60 + minutes;
  if (minutes > 59 || total > 14 * 60) return null;
  return match[1] === "-" ? -total : total;
}

const ISO_WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * An ISO 8601 date-time with an offset ("2026-11-21T10:15:30Z", "2026-11-21T11:15+01:00") as the
 * instant it names, or why it is not one: the shape, a date the calendar lacks (30 February, which
 * `new Date` would quietly move to March), an hour, minute or second out of range, an offset past
 * ±14:00, or an instant outside INSTANT_RANGE.
 */
export function readIsoInstant(text: string): { at: Date } | { problem: string } {
  const match = ISO_WITH_OFFSET.exec(text);
  if (!match) return { problem: "must be an ISO 8601 date-time with an offset" };
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((g) => Number(match[g] ?? "0")) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (!isRealDate(year, month, day)) return { problem: "names a day the calendar does not have" };
  if (hour > 23 || minute > 59 || second > 59) return { problem: "has an hour, minute or second out of range" };
  const offset = offsetMinutes(match[8]!);
  if (offset === null) return { problem: "has an offset beyond ±14:00" };
  const millisecond = Number((match[7] ?? "0").padEnd(3, "0").slice(0, 3));
  const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millisecond) - offset * 60_000);
  if (!isAcceptedInstant(at)) return { problem: `is outside the instants accepted, ${INSTANT_RANGE}` };
  return { at };
}
