import type { StatusCode } from "../domain/status";
import type { ParseOptions, TimeBasis } from "./carrier-message";
import type { LineReading, LineShape } from "./fsu-fields";
import { addDays, endOfLocalDay, isKnownTimeZone, MONTHS, nearestYear, zonedInstant } from "./message-time";

/** What placing a line's times needs: its day and month, its station, its time information. */
export type LineDate = Pick<LineReading, "date" | "station"> &
  Partial<Pick<LineReading, "departureTime" | "arrivalTime">>;

export interface PlacedTimes {
  occurredAt: Date;
  timeBasis: TimeBasis;
  /** The day the line gives its flight (MAN/DEP: scheduled departure; ARR/RCF/TOA: scheduled arrival), YYYY-MM-DD. */
  flightDate: string | null;
  toaTimestamp: Date | null;
}

type Day = { year: number; month: number; day: number };
type Clock = { hour: number; minute: number; dayChange: number };

const isoDay = (d: Day) =>
  `${String(d.year).padStart(4, "0")}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}`;

/**
 * Places an FSU line's times (Cargo-IMP times are local to the line's station). The event time is,
 * in order: DEP's actual time of departure (an A time), the time after the line's day and month, ARR
 * and RCF's actual time of arrival; moved by its day change indicator. A line with a day but no time
 * is dated when received, but no later than the end of that day at the station ("day"); a MAN or DEP
 * without even a day is dated when received. TOA's own time is when received; its new time of
 * arrival is the time of arrival (any type) or else the time after the day and month. The year is
 * the one nearest `options.now` (`nearestYear`). `code` null: an unmapped line, placed as far as it
 * goes (null when it cannot be); its caller ignores `fail`.
 */
export function placeTimes(
  code: StatusCode | null,
  shape: LineShape | null,
  line: LineDate,
  options: ParseOptions,
  fail: (reason: string) => void,
): PlacedTimes | null {
  const { now } = options;
  let day: Day | null = null;
  if (line.date) {
    const { month, day: date } = line.date;
    const year = nearestYear(month, date, now);
    const named = `${String(date).padStart(2, "0")}${MONTHS[month - 1]}`;
    if (year === null) {
      const thisYear = now.getUTCFullYear();
      fail(`${named} is not a date in ${thisYear - 1}, ${thisYear} or ${thisYear + 1}`);
      return null;
    }
    day = { year, month, day: date };
  }

  let zone: string | null | undefined;
  const zoneOf = (): string | null => {
    if (zone !== undefined) return zone;
    zone = null;
    // A line without a (valid) station has been reported by its reader already.
    if (line.station) {
      const found = options.timeZoneOf(line.station);
      if (found === null)
        fail(`the station data has no time zone for ${line.station}, so its local time cannot be placed`);
      else if (!isKnownTimeZone(found))
        fail(
          `the station data gives ${line.station} the time zone ${JSON.stringify(found)}, which is not a known zone`,
        );
      else zone = found;
    }
    return zone;
  };
  const at = (d: Day, clock: Clock): Date | null => {
    const tz = zoneOf();
    if (!tz) return null;
    const moved = addDays(d, clock.dayChange);
    return zonedInstant({ ...moved, hour: clock.hour, minute: clock.minute, second: 0, millisecond: 0 }, tz);
  };

  const flightDate = day && (shape === "departure" || shape === "arrival") ? isoDay(day) : null;
  const written: Clock | null = line.date?.time ? { ...line.date.time, dayChange: line.date.dayChange } : null;

  if (code === "TOA") {
    const clock = line.arrivalTime ?? written;
    if (!day) return null; // the arrival layout requires the day; its absence is reported already
    if (!clock) {
      fail("gives no new time of arrival: write it after the day (17OCT1230) or as the time of arrival (/E1230)");
      return null;
    }
    const toa = at(day, clock);
    return toa && { occurredAt: new Date(now), timeBasis: "received", flightDate, toaTimestamp: toa };
  }

  let clock: Clock | null = null;
  if (code === "DEP" && line.departureTime?.type === "A") clock = line.departureTime;
  else if (written) clock = written;
  else if ((code === "ARR" || code === "RCF") && line.arrivalTime?.type === "A") clock = line.arrivalTime;

  if (day && clock) {
    const occurredAt = at(day, clock);
    return occurredAt && { occurredAt, timeBasis: "local", flightDate, toaTimestamp: null };
  }
  if (day) {
    const tz = zoneOf();
    const end = tz && endOfLocalDay(day, tz);
    if (!end) return null;
    const occurredAt = new Date(Math.min(end.getTime(), now.getTime()));
    return { occurredAt, timeBasis: "day", flightDate, toaTimestamp: null };
  }
  return code === null ? null : { occurredAt: new Date(now), timeBasis: "received", flightDate, toaTimestamp: null };
}
