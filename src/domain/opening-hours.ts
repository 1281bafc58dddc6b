export const WEEKDAYS = ["MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY"] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** `open`/`close` are "HH:mm" in the station's local time; `close` may be "24:00" (end of day). */
export interface Interval {
  open: string;
  close: string;
}

export interface OpeningDay {
  day: Weekday;
  hours: Interval[];
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      weekday: "long",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatterFor(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The weekday and "HH:mm" wall-clock time at `instant` in `timeZone`. */
export function localTime(instant: Date, timeZone: string): { day: Weekday; time: string } {
  const parts = formatterFor(timeZone).formatToParts(instant);
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const day = get("weekday").toUpperCase() as Weekday;
  if (!WEEKDAYS.includes(day)) throw new Error(`unexpected weekday ${day}`);
  return { day, time: `${get("hour")}:${get("minute")}` };
}

/**
 * Whether a station is open at `instant`, from its opening hours in its own time zone; null when
 * either is unknown. An interval includes its opening minute and excludes its closing minute.
 */
export function isOpenAt(hours: readonly OpeningDay[] | null, timeZone: string | null, instant: Date): boolean | null {
  if (hours === null || timeZone === null) return null;
  const { day, time } = localTime(instant, timeZone);
  const today = hours.find((d) => d.day === day);
  return today?.hours.some((interval) => interval.open <= time && time < interval.close) ?? false;
}
