/**
 * The time rules of carrier messages (src/ingestion/message-time.ts): the year of a date given
 * without one, a station's wall-clock time as an instant (across changes of offset), the end of a
 * local day.
 */
import { endOfLocalDay, nearestYear, zonedInstant } from "../src/ingestion/message-time";

const wall = (text: string) => {
  const [date, time] = text.split("T") as [string, string];
  const [year, month, day] = date.split("-").map(Number) as [number, number, number];
  const [hour, minute] = time.split(":").map(Number) as [number, number];
  return { year, month, day, hour, minute, second: 0, millisecond: 0 };
};
const instant = (local: string, zone: string) => zonedInstant(wall(local), zone)?.toISOString() ?? null;

describe("the year of a day and month", () => {
  it.each([
    ["2027-01-03T08:00:00Z", 12, 30, 2026],
    ["2027-01-03T08:00:00Z", 1, 5, 2027],
    ["2026-12-28T08:00:00Z", 1, 2, 2027],
    ["2026-10-20T12:00:00Z", 10, 16, 2026],
    ["2026-10-20T12:00:00Z", 4, 19, 2027],
    ["2026-10-20T12:00:00Z", 4, 21, 2026],
    ["2026-06-01T12:00:00Z", 12, 30, 2025],
  ])("read on %s, %i/%i is in %i: the nearest of last, this and next year", (now, month, day, year) => {
    expect(nearestYear(month, day, new Date(now))).toBe(year);
  });

  it("places 29 February in the nearest leap year among them, and refuses it when there is none", () => {
    expect(nearestYear(2, 29, new Date("2026-10-20T12:00:00Z"))).toBeNull();
    expect(nearestYear(2, 29, new Date("2027-10-01T12:00:00Z"))).toBe(2028);
    expect(nearestYear(2, 29, new Date("2029-01-10T12:00:00Z"))).toBe(2028);
  });

  it("refuses a day the month does not have", () => {
    expect(nearestYear(4, 31, new Date("2026-10-20T12:00:00Z"))).toBeNull();
    expect(nearestYear(2, 30, new Date("2026-10-20T12:00:00Z"))).toBeNull();
  });
});

describe("a station's wall clock as an instant", () => {
  it.each([
    ["2026-10-16T13:17", "Europe/Berlin", "2026-10-16T11:17:00.000Z"],
    ["2026-12-16T13:17", "Europe/Berlin", "2026-12-16T12:17:00.000Z"],
    ["2026-10-16T20:15", "America/New_York", "2026-10-17T00:15:00.000Z"],
    ["2026-10-16T09:00", "Australia/Sydney", "2026-10-15T22:00:00.000Z"],
    ["2026-10-16T09:00", "Asia/Kathmandu", "2026-10-16T03:15:00.000Z"],
    ["2026-10-16T09:00", "UTC", "2026-10-16T09:00:00.000Z"],
  ])("%s in %s is %s", (local, zone, expected) => {
    expect(instant(local, zone)).toBe(expected);
  });

  it("reads a time that occurs twice (clocks going back) as the first", () => {
    // Europe/Berlin, 25 October 2026: 03:00 CEST becomes 02:00 CET.
    expect(instant("2026-10-25T02:30", "Europe/Berlin")).toBe("2026-10-25T00:30:00.000Z");
    // America/New_York, 1 November 2026: 02:00 EDT becomes 01:00 EST.
    expect(instant("2026-11-01T01:30", "America/New_York")).toBe("2026-11-01T05:30:00.000Z");
  });

  it("reads a time that does not occur (clocks going forward) with the offset from before, after the gap", () => {
    // Europe/Berlin, 29 March 2026: 02:00 CET becomes 03:00 CEST.
    expect(instant("2026-03-29T02:30", "Europe/Berlin")).toBe("2026-03-29T01:30:00.000Z");
    expect(instant("2026-03-29T03:30", "Europe/Berlin")).toBe("2026-03-29T01:30:00.000Z");
  });

  it("is null for a zone the runtime does not know", () => {
    expect(instant("2026-10-16T13:17", "Mars/Olympus_Mons")).toBeNull();
  });
});

describe("the end of a local day", () => {
  it("is the last millisecond before the next local midnight, on days of 23, 24 and 25 hours", () => {
    const end = (date: string, zone: string) => {
      const [year, month, day] = date.split("-").map(Number) as [number, number, number];
      return endOfLocalDay({ year, month, day }, zone)?.toISOString();
    };
    expect(end("2026-10-16", "Europe/Berlin")).toBe("2026-10-16T21:59:59.999Z");
    expect(end("2026-10-25", "Europe/Berlin")).toBe("2026-10-25T22:59:59.999Z");
    expect(end("2026-03-29", "Europe/Berlin")).toBe("2026-03-29T21:59:59.999Z");
    expect(end("2026-12-31", "America/New_York")).toBe("2027-01-01T04:59:59.999Z");
    expect(end("2026-12-31", "Mars/Olympus_Mons")).toBeUndefined();
  });
});
