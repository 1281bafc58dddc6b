import { Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { setWallClock } from "./support/clock";

/**
 * `Station.openAt` without an instant ("open now") is kept per station and side for the current
 * minute (stations/station.resolver.ts). Whatever it keeps, it must answer what `openAt(at: now)`
 * computes afresh, on both sides of every minute.
 */

describe("openAt without an instant", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, { GRAPHQL_RESPONSE_CACHE: "false" }));
  });
  afterAll(() => disposers.disposeAll());

  async function at(now: string, query: string): Promise<any> {
    setWallClock(new Date(now));
    try {
      const { body } = await postJson(`${url}/graphql`, { query, variables: { t: now } });
      expect(body.errors).toBeUndefined();
      return body.data;
    } finally {
      jest.useRealTimers();
    }
  }

  it("follows FRA's counters across the minutes where they open and close", async () => {
    // FRA's export counter: Monday to Friday 08:00–12:00 and 13:00–17:30, Europe/Berlin (UTC+1 in January).
    const query = `query($t: DateTimeISO) { station(code: "FRA") {
      now: openAt fresh: openAt(at: $t) importNow: openAt(side: IMPORT) importFresh: openAt(side: IMPORT, at: $t) } }`;
    const expected: Array<[string, boolean]> = [
      ["2026-01-05T10:59:00.000Z", true],
      ["2026-01-05T10:59:59.999Z", true], // the same minute: the kept answer
      ["2026-01-05T11:00:00.000Z", false], // 12:00 in Frankfurt: closed
      ["2026-01-05T11:59:59.999Z", false],
      ["2026-01-05T12:00:00.000Z", true],
      ["2026-01-05T12:00:30.000Z", true],
      ["2026-01-05T16:29:59.999Z", true],
      ["2026-01-05T16:30:00.000Z", false], // 17:30: closed, within the same hour
    ];
    for (const [now, open] of expected) {
      const { station } = await at(now, query);
      expect({ now, open: station.now }).toEqual({ now, open });
      expect(station.now).toBe(station.fresh);
      expect(station.importNow).toBe(station.importFresh);
    }
  });

  it("answers as openAt(at: now) for every station, across a daylight-saving change", async () => {
    const query = `query($t: DateTimeISO) { stations { code now: openAt fresh: openAt(at: $t)
      importNow: openAt(side: IMPORT) importFresh: openAt(side: IMPORT, at: $t) } }`;
    // Europe changes to summer time at 01:00 UTC on 29 March 2026; the US did on 8 March.
    for (const now of [
      "2026-03-29T00:59:59.999Z",
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:00:59.999Z",
      "2026-03-08T09:59:59.999Z",
      "2026-03-08T10:00:00.000Z",
      "2026-01-05T06:45:00.000Z",
    ]) {
      const { stations } = await at(now, query);
      expect(stations.length).toBeGreaterThan(400);
      const differing = stations.filter(
        (s: { now: unknown; fresh: unknown; importNow: unknown; importFresh: unknown }) =>
          s.now !== s.fresh || s.importNow !== s.importFresh,
      );
      expect({ now, differing }).toEqual({ now, differing: [] });
    }
  });
});
