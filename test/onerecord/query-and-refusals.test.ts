import { parseQueryTime } from "../../src/onerecord/query";
import { ADMIN_KEY, Disposers, startApp } from "../support/harness";
import { oneRecord } from "../support/onerecord-requests";

describe("the specification's query times", () => {
  it("reads years 0 to 99 as written, not as 1900 to 1999", () => {
    expect(parseQueryTime("00500101T000000Z", "at")?.date.toISOString()).toBe("0050-01-01T00:00:00.000Z");
    expect(parseQueryTime("00001231T235959Z", "at")?.date.toISOString()).toBe("0000-12-31T23:59:59.000Z");
    expect(parseQueryTime("20260926T075830Z", "at")?.endOfSecond.toISOString()).toBe("2026-09-26T07:58:30.999Z");
  });

  it("refuses a day the calendar has not, and a future time where one is not allowed", () => {
    expect(() => parseQueryTime("20260230T000000Z", "at")).toThrow(/UTC time/);
    expect(() => parseQueryTime("20260926T075830", "at")).toThrow(/UTC time/);
    expect(() => parseQueryTime("99990101T000000Z", "at", { notAfterNow: true })).toThrow(/in the future/);
  });
});

describe("URLs the router refuses before any route", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  it("are answered as api:Error under the ONE Record base path, and problem+json elsewhere", async () => {
    const badEncoding = await oneRecord(`${url}/onerecord/logistics-objects/%E0%A4%A`, { token: ADMIN_KEY });
    expect(badEncoding.status).toBe(400);
    expect(badEncoding.headers.get("content-type")).toMatch(/^application\/ld\+json; version=2\.3\.0/);
    expect(badEncoding.headers.get("content-language")).toBe("en-US");
    expect(badEncoding.body["@type"]).toBe("api:Error");
    expect(JSON.stringify(badEncoding.body)).toContain("bad percent-encoding");

    const tooLong = await oneRecord(`${url}/onerecord/logistics-objects/${"x".repeat(201)}`, { token: ADMIN_KEY });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body["@type"]).toBe("api:Error");
    expect(JSON.stringify(tooLong.body)).toContain("longer than 200 characters");

    const legacy = await fetch(`${url}/carrier/stations/station/%E0%A4%A`);
    expect(legacy.status).toBe(400);
    expect(legacy.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});
