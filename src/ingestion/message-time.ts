/**
 * Times as carrier messages give them: wall-clock times at a station (Cargo-IMP always, Cargo-XML
 * when a date-time has no offset), dates without a year (Cargo-IMP's "16OCT"). Pure: the station's
 * time zone and the reference instant are arguments.
 */
import { isRealDate } from "../domain/instant";

export const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] as const;

/** A wall-clock date and time; `month` is 1–12. */
export interface LocalDateTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

const DAY_MS = 86_400_000;
const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** A formatter giving the wall clock in `timeZone`, or null when the zone is not one Intl knows. */
function formatterFor(timeZone: string): Intl.DateTimeFormat | null {
  let formatter = formatters.get(timeZone);
  if (formatter === undefined) {
    try {
      formatter = new Intl.DateTimeFormat("en-US", {
        timeZone,
        year: "numeric",
        month: "numeric",
        day: "numeric",
        hour: "numeric",
        minute: "numeric",
        second: "numeric",
        hourCycle: "h23",
      });
    } catch {
      formatter = null;
    }
    // Bounded by the zones the station data names (and those asked for by mistake, which are few).
    if (formatters.size < 1_000) formatters.set(timeZone, formatter);
  }
  return formatter;
}

const HOUR_MS = 3_600_000;
const offsets = new Map<string, number>();

function wallClockOffset(formatter: Intl.DateTimeFormat, instant: number): number {
  const parts = formatter.formatToParts(new Date(instant));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)?.value);
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return wall - Math.floor(instant / 1_000) * 1_000;
}

/**
 * The zone's offset from UTC at `instant`, in milliseconds. Intl's formatToParts is the costly part
 * of reading a message, so an offset is remembered for its UTC hour, when the hour's first and last
 * second have that offset too (no zone changes its offset twice within an hour).
 */
function offsetAt(timeZone: string, formatter: Intl.DateTimeFormat, instant: number): number {
  const hour = Math.floor(instant / HOUR_MS);
  const key = `${timeZone} ${hour}`;
  const remembered = offsets.get(key);
  if (remembered !== undefined) return remembered;
  const offset = wallClockOffset(formatter, instant);
  const start = hour * HOUR_MS;
  if (wallClockOffset(formatter, start) === offset && wallClockOffset(formatter, start + HOUR_MS - 1_000) === offset) {
    if (offsets.size >= 10_000) offsets.clear();
    offsets.set(key, offset);
  }
  return offset;
}

export function isKnownTimeZone(timeZone: string): boolean {
  return formatterFor(timeZone) !== null;
}

/**
 * The instant at which the wall clock in `timeZone` shows `local`; null when the zone is unknown.
 * Around a change of offset it reads as Temporal's "compatible" disambiguation does: a time that
 * occurs twice (clocks going back) is the earlier instant; one that never occurs (clocks going
 * forward) is read with the offset from before the change, so it lands after the gap.
 */
export function zonedInstant(local: LocalDateTime, timeZone: string): Date | null {
  const formatter = formatterFor(timeZone);
  if (!formatter) return null;
  const wall = Date.UTC(
    local.year,
    local.month - 1,
    local.day,
    local.hour,
    local.minute,
    local.second,
    local.millisecond,
  );
  // The offsets in force a day either side cover any change of offset near this wall time.
  const before = offsetAt(timeZone, formatter, wall - DAY_MS);
  const after = offsetAt(timeZone, formatter, wall + DAY_MS);
  const fits = [before, after]
    .map((offset) => wall - offset)
    .filter((instant) => offsetAt(timeZone, formatter, instant) === wall - instant)
    .sort((a, b) => a - b);
  return new Date(fits[0] ?? wall - before);
}

/** The last millisecond of a local day in `timeZone`; null when the zone is unknown. */
export function endOfLocalDay(date: { year: number; month: number; day: number }, timeZone: string): Date | null {
  const next = new Date(Date.UTC(date.year, date.month - 1, date.day + 1));
  const start = zonedInstant(
    {
      year: next.getUTCFullYear(),
      month: next.getUTCMonth() + 1,
      day: next.getUTCDate(),
      hour: 0,
      minute: 0,
      second: 0,
      millisecond: 0,
    },
    timeZone,
  );
  return start && new Date(start.getTime() - 1);
}

/**
 * The year of a day and month given without one (Cargo-IMP's "16OCT"): of the year before `now`'s,
 * its own and the next, the one that puts the date nearest to `now` (ties go to the earlier). For
 * every date but 29 February that is within six months of `now`, so a message about last December
 * read in January, or about next January read in December, lands in the right year. Null when the
 * day does not exist in any of the three years (31 April, or 29 February with no leap year among them).
 */
export function nearestYear(month: number, day: number, now: Date): number | null {
  const year = now.getUTCFullYear();
  let best: { year: number; distance: number } | null = null;
  for (const candidate of [year - 1, year, year + 1]) {
    if (!isRealDate(candidate, month, day)) continue;
    // Noon UTC: a date is about the same day wherever the station is.
    const distance = Math.abs(Date.UTC(candidate, month - 1, day, 12) - now.getTime());
    if (!best || distance < best.distance) best = { year: candidate, distance };
  }
  return best?.year ?? null;
}

/** `date` moved by whole days (a Cargo-IMP day change indicator), month and year rolling over. */
export function addDays(date: { year: number; month: number; day: number }, days: number) {
  const moved = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}
