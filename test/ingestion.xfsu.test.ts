/**
 * The Cargo-XML XFSU parser over the fixture corpus (test/fixtures/xfsu/, each file's rule in its
 * own comment and in README.md): the milestones and unmapped statuses each gives, or the problems
 * that reject it, each naming its element.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CarrierMessageRejected, type ParseOptions, type StatusRecord } from "../src/ingestion/carrier-message";
import { parseXfsu } from "../src/ingestion/xfsu.parse";
import { STATUS_CODES } from "../src/domain/status";
import { expectMilestoneOfStatus, statusView, problemsOfParse } from "./support/carrier-messages";

const DIR = path.join(__dirname, "fixtures", "xfsu");
const ZONES: Record<string, string> = { FRA: "Europe/Berlin", JFK: "America/New_York" };
const NOW = new Date("2026-10-20T12:00:00Z");
const options = (overrides: Partial<ParseOptions> = {}): ParseOptions => ({
  enforceCheckDigit: true,
  now: NOW,
  timeZoneOf: (station) => ZONES[station] ?? null,
  ...overrides,
});
const fixture = (name: string) => readFileSync(path.join(DIR, name), "utf8");
/** The element of the j-th part of the i-th status. */
const part = (i: number, j = 1) => `MasterConsignment/ReportedStatus[${i}]/AssociatedStatusConsignment[${j}]`;
const movement = (i: number) => `${part(i)}/SpecifiedLogisticsTransportMovement[1]`;

function view(s: StatusRecord) {
  return { element: s.source.element, ...statusView(s) };
}

function problemsOf(name: string, overrides: Partial<ParseOptions> = {}) {
  return problemsOfParse(name, () => parseXfsu(fixture(name), options(overrides)));
}

const T1K100 = { q: "T1K100 of 1" };
const local = (code: string, i: number, at: string, station: string, more: object = {}) => ({
  element: part(i),
  code,
  at,
  basis: "local" as const,
  station,
  flight: null,
  ...T1K100,
  ...more,
});

const ACCEPTED: Record<string, ReturnType<typeof view>[]> = {
  "dep-with-offset.xml": [
    {
      element: part(1),
      code: "DEP",
      at: "2026-10-16T15:45:00.000Z",
      basis: "utc",
      station: "FRA",
      flight: "LH400",
      flightDate: "2026-10-16",
      ...T1K100,
    },
  ],
  "every-code.xml": [
    local("RCS", 1, "2026-10-15T14:00:00.000Z", "FRA"),
    local("MAN", 2, "2026-10-16T10:30:00.000Z", "FRA", { flight: "LH400", flightDate: "2026-10-16" }),
    local("DEP", 3, "2026-10-16T15:45:00.000Z", "FRA", { flight: "LH400", flightDate: "2026-10-16" }),
    local("ARR", 4, "2026-10-17T00:15:00.000Z", "JFK", { flight: "LH400", flightDate: "2026-10-16" }),
    local("RCF", 5, "2026-10-17T02:40:00.000Z", "JFK", { flight: "LH400" }),
    local("NFD", 6, "2026-10-17T13:00:00.000Z", "JFK"),
    local("DLV", 7, "2026-10-17T19:10:00.000Z", "JFK"),
    local("DDL", 8, "2026-10-18T14:00:00.000Z", "JFK"),
    local("RCT", 9, "2026-10-16T14:00:00.000Z", "JFK", { carrier: "AA" }),
    local("TFD", 10, "2026-10-16T15:30:00.000Z", "JFK"),
    local("DIS", 11, "2026-10-17T00:30:00.000Z", "JFK", { flight: "LH400", discrepancy: "MSCA" }),
    {
      element: part(12),
      code: "TOA",
      at: "2026-10-16T12:00:00.000Z",
      basis: "utc",
      station: "JFK",
      flight: "LH400",
      flightDate: "2026-10-16",
      toa: "2026-10-17T01:05:00.000Z",
      ...T1K100,
    },
  ],
  "split-shipment.xml": [
    {
      element: part(1, 1),
      code: "DEP",
      at: "2026-10-16T15:45:00.000Z",
      basis: "local",
      station: "FRA",
      flight: "LH400",
      flightDate: "2026-10-16",
      q: "P4K200 of 10",
    },
    {
      element: part(1, 2),
      code: "DEP",
      at: "2026-10-17T07:05:00.000Z",
      basis: "local",
      station: "FRA",
      flight: "LH8160",
      flightDate: "2026-10-17",
      q: "P6K300 of 10",
    },
  ],
  "missing-optional.xml": [
    {
      element: "MasterConsignment/ReportedStatus[1]",
      code: "DLV",
      at: NOW.toISOString(),
      basis: "received",
      station: null,
      flight: null,
    },
    { element: part(2), code: "RCS", at: NOW.toISOString(), basis: "received", station: null, flight: null, ...T1K100 },
    {
      element: part(3),
      code: "ARR",
      at: NOW.toISOString(),
      basis: "received",
      station: "JFK",
      flight: "LH400",
      ...T1K100,
    },
  ],
};
ACCEPTED["other-prefixes.xml"] = ACCEPTED["dep-with-offset.xml"]!;

const REJECTED: Record<string, [field: string, reason: string][]> = {
  "wrong-check-digit.xml": [
    [
      "MasterConsignment/TransportContractDocument/ID",
      "AWB 020-12345676 has a wrong check digit: the first seven digits of its serial give 5",
    ],
  ],
  "bad-values.xml": [
    [`${movement(1)}/SpecifiedLocation[1]/ID`, "is not an IATA airport code"],
    [`${movement(2)}/ID`, "is not a flight designator such as LH400"],
    [
      `${movement(2)}/SpecifiedEvent/OccurrenceDateTime`,
      "is not a date-time such as 2026-10-16T13:17:00, with or without an offset",
    ],
    [`${movement(3)}/ArrivalEvent/ArrivalOccurrenceDateTime`, "is missing: a TOA gives its new time of arrival there"],
    [
      `${movement(4)}/SpecifiedEvent/OccurrenceDateTime`,
      "has no offset, and the station data has no time zone for DOH",
    ],
    [`${part(5)}/PieceQuantity`, "is not a number of pieces"],
  ],
  "missing-reason-code.xml": [
    ["MasterConsignment/TransportContractDocument/ID", "is missing: it carries the AWB"],
    ["MasterConsignment/ReportedStatus[1]/ReasonCode", "is missing: it carries the status code"],
  ],
  "not-status-message.xml": [["Waybill", "is not StatusMessage, the root element of a Cargo-XML XFSU"]],
  "not-well-formed.xml": [["line 3", "is not well-formed XML: Unclosed tag 'rsm:StatusMessage'."]],
  "entity-expansion.xml": [
    ["line 3", "has a DOCTYPE, which Cargo-XML messages do not have and the gateway does not read"],
  ],
  "external-entity.xml": [
    ["line 3", "has a DOCTYPE, which Cargo-XML messages do not have and the gateway does not read"],
  ],
};

describe("XFSU fixtures", () => {
  it("lists every fixture in a table here and in the corpus README", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".xml"));
    const listed = [...Object.keys(ACCEPTED), ...Object.keys(REJECTED), "unknown-codes.xml"];
    expect(files.sort()).toEqual([...new Set(listed)].sort());
    const readme = readFileSync(path.join(DIR, "README.md"), "utf8");
    for (const file of files) {
      expect(readme).toContain(`\`${file}\``);
      expect(fixture(file)).toMatch(/<!-- .+ -->/);
    }
  });

  it.each(Object.entries(ACCEPTED))("%s maps to its milestones", (name, statuses) => {
    const message = parseXfsu(fixture(name), options());
    expect(message.statuses.map(view)).toEqual(statuses);
    expect(message.unmapped).toEqual([]);
  });

  it.each(Object.entries(REJECTED))("%s is rejected, naming each element and why", (name, problems) => {
    expect(problemsOf(name)).toEqual(problems);
  });

  it("keeps what maps and records every other status, never failing for an unknown one", () => {
    const message = parseXfsu(fixture("unknown-codes.xml"), options());
    expect(message.statuses.map(view)).toEqual([local("NFD", 4, "2026-10-17T13:00:00.000Z", "JFK")]);
    expect(
      message.unmapped.map((u) => [u.source.element, u.code, u.occurredAt?.toISOString() ?? null, u.station, u.reason]),
    ).toEqual([
      [
        part(1),
        "FOH",
        "2026-10-15T13:00:00.000Z",
        "FRA",
        "FOH (Freight on hand) is not one of the gateway's status codes",
      ],
      [part(2), "BKD", null, "FRA", "BKD (Booked) is not one of the gateway's status codes"],
      [
        part(3),
        "CCD",
        "2026-10-17T11:00:00.000Z",
        "JFK",
        "CCD (Cleared by customs) is not one of the gateway's status codes",
      ],
      [part(5), "QQQ", null, null, "QQQ is not a status code the gateway knows"],
    ]);
  });

  it("maps every gateway status code", () => {
    const codes = new Set(parseXfsu(fixture("every-code.xml"), options()).statuses.map((s) => s.code));
    expect(codes).toEqual(new Set(STATUS_CODES));
  });

  it("reads the consignment: AWB, origin and destination, header version, totals", () => {
    expect(parseXfsu(fixture("split-shipment.xml"), options())).toMatchObject({
      format: "XFSU",
      version: "3.00",
      awb: "020-12345675",
      checkDigitValid: true,
      origin: "FRA",
      destination: "JFK",
      quantity: { shipment: "T", pieces: 10, weight: 500, weightUnit: "K", totalPieces: 10 },
    });
  });

  it("applies the check digit policy as JSON ingestion does", () => {
    const message = parseXfsu(fixture("wrong-check-digit.xml"), options({ enforceCheckDigit: false }));
    expect(message).toMatchObject({ awb: "020-12345676", checkDigitValid: false });
    expect(message.statuses).toHaveLength(1);
  });
});

describe("XFSU milestones and event ids", () => {
  const accepted = [...Object.keys(ACCEPTED), "unknown-codes.xml"];

  it.each(accepted)("%s: each milestone is what JSON ingestion would have read from the same event", (name) => {
    const message = parseXfsu(fixture(name), options());
    expect(message.statuses.length).toBeGreaterThan(0);
    for (const status of message.statuses) expectMilestoneOfStatus(message, status, NOW);
  });

  it("derives the same ids from the same statuses, whatever the prefixes or the time received", () => {
    const ids = (name: string, now = NOW) => {
      const message = parseXfsu(fixture(name), options({ now }));
      return [...message.statuses, ...message.unmapped].map((s) => s.eventId);
    };
    expect(ids("other-prefixes.xml")).toEqual(ids("dep-with-offset.xml"));
    expect(ids("missing-optional.xml", new Date("2026-10-21T00:00:00Z"))).toEqual(ids("missing-optional.xml"));
    const all = accepted.flatMap((name) => ids(name));
    for (const id of all) expect(id).toMatch(/^xfsu:[A-Za-z0-9_-]{43}$/);
    const mapped = ids("every-code.xml");
    expect(new Set(mapped).size).toBe(mapped.length);
  });

  it("refuses what is not an XFSU at all, and more than it reads", () => {
    for (const text of [
      "",
      "FSU/14\n020-12345675FRAJFK/T1K100",
      "{}",
      "<a>1</a><b>2</b>",
      "<a>".repeat(200) + "</a>".repeat(200),
    ])
      expect(() => parseXfsu(text, options())).toThrow(CarrierMessageRejected);
    expect(() => parseXfsu(`<x>${" ".repeat(1_048_576)}</x>`, options())).toThrow(/more than the 1048576 read/);
    expect(() => parseXfsu("<__proto__><ReasonCode>DEP</ReasonCode></__proto__>", options())).toThrow(
      CarrierMessageRejected,
    );
  });

  it("refuses a NUL character, which XML does not allow and its validator lets through", () => {
    const text = fixture("dep-with-offset.xml").replace("<ram:ReasonCode>", "<ram:ReasonCode>\u0000");
    expect(problemsOfParse("inline", () => parseXfsu(text, options()))).toEqual([
      [expect.stringMatching(/^line \d+$/), "is not well-formed XML: it holds the NUL character (U+0000)"],
    ]);
  });

  it("reads numeric character references as the characters they name, and refuses those naming none", () => {
    const plain = parseXfsu(fixture("dep-with-offset.xml"), options());
    const referenced = fixture("dep-with-offset.xml").replace(
      "<ram:ReasonCode>DEP</ram:ReasonCode>",
      "<ram:ReasonCode>&#68;&#x45;P</ram:ReasonCode>",
    );
    expect(parseXfsu(referenced, options()).statuses.map((s) => s.code)).toEqual(plain.statuses.map((s) => s.code));
    for (const reference of ["&#0;", "&#xD800;", "&#x110000;"]) {
      const text = fixture("dep-with-offset.xml").replace("<ram:ReasonCode>DEP", `<ram:ReasonCode>DEP${reference}`);
      expect(problemsOfParse(reference, () => parseXfsu(text, options()))).toEqual([
        [
          expect.stringMatching(/^line \d+$/),
          `is not well-formed XML: the character reference ${reference} names no XML character`,
        ],
      ]);
    }
  });
});
