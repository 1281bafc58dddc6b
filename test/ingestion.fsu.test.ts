/**
 * The Cargo-IMP FSU parser over the fixture corpus (test/fixtures/fsu/, each file's rule and source
 * in its README.md): the milestones and unmapped lines each fixture gives, or the problems that
 * reject it. Station time zones are those of the bundled station data for the stations used.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CarrierMessageRejected, type ParseOptions, type StatusRecord } from "../src/ingestion/carrier-message";
import { parseFsu } from "../src/ingestion/fsu.parse";
import { STATUS_CODES } from "../src/domain/status";
import { expectMilestoneOfStatus, statusView, problemsOfParse } from "./support/carrier-messages";

const DIR = path.join(__dirname, "fixtures", "fsu");
const ZONES: Record<string, string> = {
  FRA: "Europe/Berlin",
  JFK: "America/New_York",
  LHR: "Europe/London",
  MRU: "Indian/Mauritius",
  ORD: "America/Chicago",
};
const NOW = new Date("2026-10-20T12:00:00Z");
const options = (overrides: Partial<ParseOptions> = {}): ParseOptions => ({
  enforceCheckDigit: true,
  now: NOW,
  timeZoneOf: (station) => ZONES[station] ?? null,
  ...overrides,
});
const fixture = (name: string) => readFileSync(path.join(DIR, name), "utf8");

/** A status as the tables below write it. */
function view(s: StatusRecord) {
  return { line: s.source.line, ...statusView(s) };
}

function parsed(name: string, overrides: Partial<ParseOptions> = {}) {
  return parseFsu(fixture(name), options(overrides)).map((m) => ({
    statuses: m.statuses.map(view),
    unmapped: m.unmapped.map((u) => ({ ...view(u), reason: u.reason })),
  }));
}

function problemsOf(name: string, overrides: Partial<ParseOptions> = {}) {
  return problemsOfParse(name, () => parseFsu(fixture(name), options(overrides)));
}

const FRA = { station: "FRA" };
const JFK = { station: "JFK" };
const T1K100 = { q: "T1K100 of 1" };

const ACCEPTED: Record<string, ReturnType<typeof view>[]> = {
  "rcs.txt": [
    { line: 3, code: "RCS", at: "2026-10-16T11:17:00.000Z", basis: "local", ...FRA, flight: null, ...T1K100 },
  ],
  "man-dep-no-times.txt": [
    {
      line: 3,
      code: "MAN",
      at: "2026-10-16T21:59:59.999Z",
      basis: "day",
      ...FRA,
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
    {
      line: 4,
      code: "DEP",
      at: "2026-10-16T21:59:59.999Z",
      basis: "day",
      ...FRA,
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
  ],
  "dep-actual-time.txt": [
    {
      line: 3,
      code: "DEP",
      at: "2026-10-16T15:45:00.000Z",
      basis: "local",
      ...FRA,
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
  ],
  "arr-rcf.txt": [
    {
      line: 3,
      code: "ARR",
      at: "2026-10-17T00:15:00.000Z",
      basis: "local",
      ...JFK,
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
    {
      line: 4,
      code: "RCF",
      at: "2026-10-17T05:15:00.000Z",
      basis: "local",
      ...JFK,
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
  ],
  "nfd-dlv-ddl.txt": [
    { line: 3, code: "NFD", at: "2026-10-17T13:00:00.000Z", basis: "local", ...JFK, flight: null, ...T1K100 },
    { line: 4, code: "DLV", at: "2026-10-18T03:59:59.999Z", basis: "day", ...JFK, flight: null, ...T1K100 },
    { line: 5, code: "DDL", at: "2026-10-18T18:30:00.000Z", basis: "local", ...JFK, flight: null, ...T1K100 },
  ],
  "rct-tfd.txt": [
    {
      line: 3,
      code: "RCT",
      at: "2026-10-16T14:00:00.000Z",
      basis: "local",
      ...JFK,
      flight: null,
      ...T1K100,
      carrier: "AA",
    },
    {
      line: 5,
      code: "TFD",
      at: "2026-10-16T15:30:00.000Z",
      basis: "local",
      ...JFK,
      flight: null,
      ...T1K100,
      carrier: "AA",
    },
  ],
  "dis.txt": [
    {
      line: 3,
      code: "DIS",
      at: "2026-10-17T00:30:00.000Z",
      basis: "local",
      ...JFK,
      flight: "LH400",
      q: "T1K100 of 2",
      discrepancy: "MSCA",
    },
    {
      line: 4,
      code: "DIS",
      at: "2026-10-17T12:00:00.000Z",
      basis: "local",
      ...JFK,
      flight: null,
      q: "T1K100 of 2",
      discrepancy: "FDCA",
    },
  ],
  "toa.txt": [
    {
      line: 3,
      code: "TOA",
      at: NOW.toISOString(),
      basis: "received",
      ...JFK,
      flight: "LH400",
      flightDate: "2026-10-17",
      toa: "2026-10-17T05:30:00.000Z",
      ...T1K100,
    },
    {
      line: 4,
      code: "TOA",
      at: NOW.toISOString(),
      basis: "received",
      ...JFK,
      flight: "LH400",
      flightDate: "2026-10-16",
      toa: "2026-10-17T03:50:00.000Z",
      ...T1K100,
    },
  ],
  "part-shipment.txt": [
    { line: 3, code: "RCS", at: "2026-10-15T14:00:00.000Z", basis: "local", ...FRA, flight: null, q: "T10K500 of 10" },
    {
      line: 4,
      code: "DEP",
      at: "2026-10-16T15:45:00.000Z",
      basis: "local",
      ...FRA,
      flight: "LH400",
      flightDate: "2026-10-16",
      q: "P4K200 of 10",
    },
    {
      line: 5,
      code: "DEP",
      at: "2026-10-17T07:05:00.000Z",
      basis: "local",
      ...FRA,
      flight: "LH8160",
      flightDate: "2026-10-17",
      q: "P6K300 of 10",
    },
  ],
  "part-consignment-line.txt": [
    {
      line: 3,
      code: "RCF",
      at: "2026-10-20T05:10:00.000Z",
      basis: "local",
      station: "LHR",
      flight: "CX255",
      flightDate: "2026-10-20",
      q: "P2K505 of 10",
    },
  ],
  "missing-optional.txt": [
    { line: 3, code: "RCS", at: "2026-10-16T21:59:59.999Z", basis: "day", ...FRA, flight: null },
    { line: 4, code: "DEP", at: NOW.toISOString(), basis: "received", ...FRA, flight: null },
    {
      line: 5,
      code: "ARR",
      at: "2026-10-18T03:59:59.999Z",
      basis: "day",
      ...JFK,
      flight: null,
      flightDate: "2026-10-17",
    },
  ],
  "envelope-crlf.txt": [
    { line: 8, code: "RCS", at: "2026-10-16T11:17:00.000Z", basis: "local", ...FRA, flight: null, ...T1K100 },
  ],
  "fsu12-rcf.txt": [
    {
      line: 3,
      code: "RCF",
      at: "2026-11-20T09:00:00.000Z",
      basis: "local",
      station: "MRU",
      flight: "MK059",
      flightDate: "2026-11-20",
      q: "T1K14.1 of 1",
    },
  ],
  "fsu15-dlv.txt": [
    { line: 3, code: "DLV", at: "2026-10-18T20:20:00.000Z", basis: "local", ...JFK, flight: null, q: "T3K45.5 of 3" },
  ],
  "year-boundary.txt": [
    { line: 3, code: "DLV", at: "2026-12-30T17:00:00.000Z", basis: "local", ...JFK, flight: null, ...T1K100 },
  ],
};

const REJECTED: Record<string, [field: string, reason: string][]> = {
  "wrong-check-digit.txt": [
    ["line 2", "AWB 020-12345676 has a wrong check digit: the first seven digits of its serial give 5"],
  ],
  "malformed-lines.txt": [
    ["line 3", "XYZ is not a month (JAN … DEC)"],
    ["line 4", '"FRAX" is not an IATA airport code'],
    ["line 5", '"T1K1OO" is not a quantity such as T1K100 (T or P, pieces, K or L and weight) or P2K50.5T10'],
    ["line 6", "has no airport (a three-letter IATA code)"],
    ["line 8", "29FEB is not a date in 2025, 2026 or 2027"],
    ["line 9", 'time of departure: "X17450" is not time information such as A0930 or E1230-N'],
    ["line 10", "gives no new time of arrival: write it after the day (17OCT1230) or as the time of arrival (/E1230)"],
  ],
  "not-fsu.txt": [["line 1", "holds no FSU/<version> line: not a Cargo-IMP FSU message"]],
  "no-status.txt": [["line 2", "is followed by no status line"]],
  "station-without-zone.txt": [
    ["line 4", "the station data has no time zone for DOH, so its local time cannot be placed"],
  ],
  "old-version.txt": [["line 1", "FSU/6 is not read (versions read: FSU/12 to FSU/16)"]],
  "bad-consignment.txt": [
    [
      "line 2",
      "is not a consignment line: an AWB such as 020-12345675, origin and destination (FRAJFK), quantity (/T1K100)",
    ],
  ],
};

describe("FSU fixtures", () => {
  it("lists every fixture in a table here and in the corpus README", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".txt"));
    const listed = [
      ...Object.keys(ACCEPTED),
      ...Object.keys(REJECTED),
      "one-record-example-2a.txt",
      "unknown-codes.txt",
    ];
    expect(files.sort()).toEqual([...new Set(listed)].sort());
    const readme = readFileSync(path.join(DIR, "README.md"), "utf8");
    for (const file of files) expect(readme).toContain(`\`${file}\``);
  });

  it.each(Object.entries(ACCEPTED))("%s maps to its milestones", (name, statuses) => {
    const messages = parsed(name, name === "year-boundary.txt" ? { now: new Date("2027-01-03T08:00:00Z") } : {});
    expect(messages.flatMap((m) => m.statuses)).toEqual(statuses);
    expect(messages.flatMap((m) => m.unmapped)).toEqual([]);
  });

  it.each(Object.entries(REJECTED))("%s is rejected, naming each line and why", (name, problems) => {
    expect(problemsOf(name)).toEqual(problems);
  });

  it("reads the five messages of ONE Record's example 2a, keeping BKD and FOH as unmapped", () => {
    const messages = parsed("one-record-example-2a.txt");
    expect(messages).toEqual([
      {
        statuses: [],
        unmapped: [
          {
            line: 3,
            code: "BKD",
            at: "2026-10-16T11:17:00.000Z",
            basis: "local",
            ...FRA,
            flight: null,
            reason: "BKD (Booked) is not one of the gateway's status codes",
          },
        ],
      },
      {
        statuses: [],
        unmapped: [
          {
            line: 6,
            code: "FOH",
            at: "2026-10-16T11:17:00.000Z",
            basis: "local",
            ...FRA,
            flight: null,
            reason: "FOH (Freight on hand) is not one of the gateway's status codes",
          },
        ],
      },
      {
        statuses: [{ line: 9, code: "RCS", at: "2026-10-16T11:17:00.000Z", basis: "local", ...FRA, flight: null }],
        unmapped: [],
      },
      {
        statuses: [
          {
            line: 12,
            code: "MAN",
            at: "2026-10-16T21:59:59.999Z",
            basis: "day",
            ...FRA,
            flight: "LH400",
            flightDate: "2026-10-16",
          },
        ],
        unmapped: [],
      },
      {
        statuses: [
          {
            line: 15,
            code: "DEP",
            at: "2026-10-16T21:59:59.999Z",
            basis: "day",
            ...FRA,
            flight: "LH400",
            flightDate: "2026-10-16",
            ...T1K100,
          },
        ],
        unmapped: [],
      },
    ]);
  });

  it("keeps what maps and records every other line, never failing for an unknown one", () => {
    const [message] = parsed("unknown-codes.txt");
    expect(message!.statuses).toEqual([
      { line: 5, code: "RCS", at: "2026-10-16T12:00:00.000Z", basis: "local", ...FRA, flight: null, ...T1K100 },
    ]);
    expect(message!.unmapped.map((u) => [u.line, u.code, u.at, u.station, u.reason])).toEqual([
      [3, "FOH", "2026-10-16T11:17:00.000Z", "FRA", "FOH (Freight on hand) is not one of the gateway's status codes"],
      [4, "BKD", "2026-10-16T21:59:59.999Z", "FRA", "BKD (Booked) is not one of the gateway's status codes"],
      [6, "OCI", null, null, "an information line (other customs, security and regulatory information), not a status"],
      [8, "OSI", null, null, "an information line (other service information), not a status"],
      [
        9,
        "CCD",
        "2026-10-17T11:00:00.000Z",
        "JFK",
        "CCD (Cleared by customs) is not one of the gateway's status codes",
      ],
      [
        10,
        "FIW",
        "2026-10-17T05:30:00.000Z",
        "JFK",
        "FIW (Freight into warehouse control) is not one of the gateway's status codes",
      ],
      [11, "XYZ", null, null, "XYZ is not a status code the gateway knows"],
    ]);
  });

  it("keeps a line's continuation lines with it", () => {
    const [message] = parseFsu(fixture("rct-tfd.txt"), options());
    expect(message!.statuses.map((s) => s.source.text)).toEqual([
      "RCT/AA/16OCT1000/JFK/T1K100\n/LH/LUFTHANSA CARGO",
      "TFD/AA/16OCT1130/JFK/T1K100/123456\n/LH",
    ]);
    const [other] = parseFsu(fixture("unknown-codes.txt"), options());
    expect(other!.unmapped.find((u) => u.code === "OCI")!.source.text).toBe("OCI/DE/ISS/RA/00012-01\n/DE//SM/XRY");
  });

  it("maps every gateway status code", () => {
    const codes = new Set(Object.values(ACCEPTED).flatMap((statuses) => statuses.map((s) => s.code)));
    expect([...STATUS_CODES].filter((code) => !codes.has(code))).toEqual([]);
  });

  it("reads the consignment line: AWB, origin and destination, total or part quantity", () => {
    const [total] = parseFsu(fixture("rcs.txt"), options());
    expect(total).toMatchObject({
      format: "FSU",
      version: "14",
      awb: "020-12345675",
      checkDigitValid: true,
      origin: "FRA",
      destination: "JFK",
      quantity: { shipment: "T", pieces: 1, weight: 100, weightUnit: "K", totalPieces: null },
    });
    const [part] = parseFsu(fixture("part-consignment-line.txt"), options());
    expect(part).toMatchObject({ awb: "157-53806270", quantity: { shipment: "P", pieces: 2, totalPieces: 10 } });
    const [bare] = parseFsu(fixture("missing-optional.txt"), options());
    expect(bare).toMatchObject({ origin: null, destination: null, quantity: null });
  });

  it("applies the check digit policy as JSON ingestion does", () => {
    expect(problemsOf("wrong-check-digit.txt", { enforceCheckDigit: true })).toHaveLength(1);
    const [message] = parseFsu(fixture("wrong-check-digit.txt"), options({ enforceCheckDigit: false }));
    expect(message).toMatchObject({ awb: "020-12345676", checkDigitValid: false });
    expect(message!.statuses).toHaveLength(1);
  });

  it("gives a day without a year the year nearest to when it is received", () => {
    const at = (now: string) =>
      parseFsu(fixture("year-boundary.txt"), options({ now: new Date(now) }))[0]!.statuses[0]!.occurredAt.toISOString();
    expect(at("2027-01-03T08:00:00Z")).toBe("2026-12-30T17:00:00.000Z");
    expect(at("2026-10-20T12:00:00Z")).toBe("2026-12-30T17:00:00.000Z");
    expect(at("2026-06-01T12:00:00Z")).toBe("2025-12-30T17:00:00.000Z");
  });

  it("dates a day without a time when received, but never later than the end of that day at the station", () => {
    const dlv = (now: string) =>
      parseFsu(fixture("nfd-dlv-ddl.txt"), options({ now: new Date(now) }))[0]!.statuses[1]!.occurredAt.toISOString();
    expect(dlv("2026-10-17T18:00:00Z")).toBe("2026-10-17T18:00:00.000Z");
    expect(dlv("2026-10-25T18:00:00Z")).toBe("2026-10-18T03:59:59.999Z");
  });
});

describe("FSU milestones and event ids", () => {
  const accepted = readdirSync(DIR).filter((f) => f.endsWith(".txt") && !(f in REJECTED));

  it.each(accepted)("%s: each milestone is what JSON ingestion would have read from the same event", (name) => {
    const messages = parseFsu(fixture(name), options());
    expect(messages.flatMap((message) => message.statuses).length).toBeGreaterThan(0);
    for (const message of messages) {
      for (const status of message.statuses) expectMilestoneOfStatus(message, status, NOW);
    }
  });

  it("derives the same ids from the same statuses, whatever the envelope, line ends, line numbers or time received", () => {
    const ids = (name: string, now = NOW) =>
      parseFsu(fixture(name), options({ now })).flatMap((m) => [...m.statuses, ...m.unmapped].map((s) => s.eventId));
    expect(ids("envelope-crlf.txt")).toEqual(ids("rcs.txt"));
    expect(ids("man-dep-no-times.txt", new Date("2026-10-16T08:00:00Z"))).toEqual(ids("man-dep-no-times.txt"));
    const all = accepted.flatMap((name) => ids(name));
    for (const id of all) expect(id).toMatch(/^fsu:[A-Za-z0-9_-]{43}$/);
  });

  it("gives different statuses different ids, and the same line of another AWB another id", () => {
    const [message] = parseFsu(fixture("part-shipment.txt"), options());
    const ids = message!.statuses.map((s) => s.eventId);
    expect(new Set(ids).size).toBe(ids.length);
    const [other] = parseFsu(fixture("rcs.txt").replace("020-12345675", "176-12345675"), options());
    expect(other!.statuses[0]!.eventId).not.toBe(parseFsu(fixture("rcs.txt"), options())[0]!.statuses[0]!.eventId);
  });

  it("refuses a text longer than it reads, more statuses than one ingestion stores, more lines than it reads", () => {
    expect(() => parseFsu("FSU/14\n".padEnd(1_048_577, "X"), options())).toThrow(CarrierMessageRejected);
    const many = [
      "FSU/14",
      "020-12345675FRAJFK/T1K100",
      ...Array.from({ length: 1_001 }, () => "RCS/16OCT1317/FRA/T1K100"),
    ];
    expect(() => parseFsu(many.join("\n"), options())).toThrow(/holds 1001 statuses, more than the 1000/);
    const lines = ["FSU/14", "020-12345675FRAJFK/T1K100", ...Array.from({ length: 10_001 }, () => "FOH/16OCT1317/FRA")];
    expect(() => parseFsu(lines.join("\n"), options())).toThrow(/holds more than 10000 status lines/);
  });

  it("refuses a NUL character in any line, even an unmapped one (PostgreSQL text cannot hold it)", () => {
    const text = "FSU/14\n020-12345675FRAJFK/T1K100\nRCS/16OCT1317/FRA/T1K100\nOSI/A\u0000B\n";
    expect(problemsOfParse("inline", () => parseFsu(text, options()))).toEqual([
      ["line 4", "holds the NUL character (U+0000)"],
    ]);
  });
});
