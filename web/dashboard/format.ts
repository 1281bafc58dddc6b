import { STATUS_NAMES, isStatusCode } from "../../src/domain/status";

export function stateName(code: string): string {
  return isStatusCode(code) ? STATUS_NAMES[code] : code;
}

/** The viewer's own zone, as the browser knows it ("Europe/Berlin"). */
export const viewerTimeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;

const viewerFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dayKey = (zone: string | undefined) =>
  new Intl.DateTimeFormat("en-CA", {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    ...(zone ? { timeZone: zone } : {}),
  });
const viewerDay = dayKey(undefined);
const stationFormats = new Map<
  string,
  { day: Intl.DateTimeFormat; time: Intl.DateTimeFormat; dateTime: Intl.DateTimeFormat }
>();

export function viewerTime(iso: string): string {
  return viewerFormat.format(new Date(iso));
}

/**
 * The instant in a station's zone with the zone's short name: "10:15 AM GMT+1", with the date
 * ("Nov 21, 10:15 AM GMT+1") only when the station's day differs from the viewer's. Null when the
 * zone is unknown (to the data or to this browser).
 */
export function stationTime(iso: string, timeZone: string | null | undefined): string | null {
  if (!timeZone) return null;
  let formats = stationFormats.get(timeZone);
  if (!formats) {
    try {
      // Spelled out field by field: Intl refuses timeZoneName together with dateStyle/timeStyle.
      const time = { hour: "numeric", minute: "2-digit", timeZone, timeZoneName: "short" } as const;
      formats = {
        day: dayKey(timeZone),
        time: new Intl.DateTimeFormat(undefined, time),
        dateTime: new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", ...time }),
      };
    } catch {
      return null;
    }
    stationFormats.set(timeZone, formats);
  }
  const instant = new Date(iso);
  return (formats.day.format(instant) === viewerDay.format(instant) ? formats.time : formats.dateTime).format(instant);
}

export function weekdayName(day: string): string {
  return day.charAt(0) + day.slice(1).toLowerCase();
}
