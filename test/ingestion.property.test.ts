/**
 * No input makes a carrier-message parser throw anything but its own rejection
 * (`CarrierMessageRejected`, with at least one problem naming its place), and whatever a parser
 * accepts is a set of milestones JSON ingestion would accept too. Inputs: arbitrary strings,
 * FSU-shaped token soup, mutated fixtures, random XML and XFSU-shaped documents with arbitrary values.
 * Fixed seeds, so a failure is reproducible; fast-check shrinks it to a small counterexample.
 */
import { isAcceptedInstant } from "../src/domain/instant";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { type CarrierMessage, CarrierMessageRejected, type ParseOptions } from "../src/ingestion/carrier-message";
import { parseFsu } from "../src/ingestion/fsu.parse";
import { parseXfsu } from "../src/ingestion/xfsu.parse";
import { isStatusCode } from "../src/domain/status";
import { expectJsonReadsTheSame } from "./support/carrier-messages";
import { IN_GATE, runsInSuite } from "./support/suite";

const NOW = new Date("2026-10-20T12:00:00Z");
const ZONES: Record<string, string> = { FRA: "Europe/Berlin", JFK: "America/New_York", LHR: "Europe/London" };
const options: ParseOptions = {
  enforceCheckDigit: true,
  now: NOW,
  timeZoneOf: (station) => ZONES[station] ?? (station === "BAD" ? "Not/A_Zone" : null),
};
const counts = {
  FSU: { accepted: 0, rejected: 0, milestones: 0 },
  XFSU: { accepted: 0, rejected: 0, milestones: 0 },
};

/** Runs a parser and checks the outcome: a clear rejection, or milestones JSON ingestion accepts. */
function outcome(format: keyof typeof counts, parse: () => CarrierMessage[]): void {
  let messages: CarrierMessage[];
  try {
    messages = parse();
  } catch (error) {
    if (!(error instanceof CarrierMessageRejected)) throw error;
    expect(error.problems.length).toBeGreaterThan(0);
    for (const problem of error.problems) {
      expect(typeof problem.field).toBe("string");
      expect(problem.field.length).toBeGreaterThan(0);
      expect(problem.message).toContain(problem.reason);
    }
    counts[format].rejected++;
    return;
  }
  counts[format].accepted++;
  for (const message of messages) {
    expect(message.awb).toMatch(/^\d{3}-\d{8}$/);
    for (const status of message.statuses) {
      counts[format].milestones++;
      const { milestone } = status;
      expect(isStatusCode(milestone.state)).toBe(true);
      expect(isAcceptedInstant(milestone.occurredAt)).toBe(true);
      if (milestone.toaTimestamp) expect(isAcceptedInstant(milestone.toaTimestamp)).toBe(true);
      expect(milestone.eventId).toMatch(/^x?fsu:[A-Za-z0-9_-]{43}$/);
      expectJsonReadsTheSame(milestone, NOW);
    }
    for (const line of message.unmapped) {
      expect(isStatusCode(line.code)).toBe(false);
      expect(line.reason.length).toBeGreaterThan(0);
      if (line.occurredAt) expect(Number.isNaN(line.occurredAt.getTime())).toBe(false);
      if (line.occurredAt) expect(isAcceptedInstant(line.occurredAt)).toBe(true);
    }
  }
}

const fsu = (text: string) => outcome("FSU", () => parseFsu(text, options));
const xfsu = (text: string) => outcome("XFSU", () => [parseXfsu(text, options)]);

const fixtures = (folder: string, ext: string) => {
  const dir = path.join(__dirname, "fixtures", folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith(ext))
    .map((f) => readFileSync(path.join(dir, f), "utf8"));
};

/** Up to six edits of a text: characters deleted, inserted or replaced, lines repeated or cut off. */
function mutated(texts: string[]): fc.Arbitrary<string> {
  const edit = fc.record({
    kind: fc.constantFrom("delete", "insert", "replace", "repeat-line", "truncate"),
    at: fc.nat(),
    char: fc.constantFrom("/", "-", "\n", "\r", " ", "A", "Z", "0", "9", "<", ">", "&", '"', "\u0000", "é", "T", "K"),
  });
  return fc.tuple(fc.constantFrom(...texts), fc.array(edit, { minLength: 1, maxLength: 6 })).map(([text, edits]) =>
    edits.reduce((t, { kind, at, char }) => {
      const i = t.length === 0 ? 0 : at % t.length;
      switch (kind) {
        case "delete":
          return t.slice(0, i) + t.slice(i + 1);
        case "insert":
          return t.slice(0, i) + char + t.slice(i);
        case "replace":
          return t.slice(0, i) + char + t.slice(i + 1);
        case "repeat-line": {
          const lines = t.split("\n");
          const n = at % Math.max(lines.length, 1);
          lines.splice(n, 0, lines[n] ?? "");
          return lines.join("\n");
        }
        default:
          return t.slice(0, i);
      }
    }, text),
  );
}

// ---- FSU --------------------------------------------------------------------------------------------
const fsuToken = fc.oneof(
  fc.constantFrom("RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD", "DIS", "TOA"),
  fc.constantFrom("FOH", "BKD", "OCI", "OSI", "ULD", "CCD", "XYZ", "FSU", "PDM"),
  fc.constantFrom(
    "16OCT",
    "16OCT1317",
    "30DEC2359",
    "29FEB",
    "31APR",
    "16OCT2400",
    "16OCT1317-N",
    "16OCT1317-X",
    "99ZZZ",
  ),
  fc.constantFrom("FRA", "JFK", "LHR", "DOH", "BAD", "FRAJFK", "JFKFRA", "FRAX", "fra"),
  fc.constantFrom("T1K100", "P2K505.0T10", "T25", "T1K1OO", "S0930", "P0", "T99999K9999999.999T99999", "D3L7"),
  fc.constantFrom("A0930", "E2359-N", "S0000-P", "A2460", "X1"),
  fc.constantFrom("LH400", "LH8160", "O31698", "LH 400", "MSCA", "AA", "LH"),
  fc.constantFrom("", " "),
  fc.string({ maxLength: 12 }).filter((s) => !s.includes("/") && !/[\r\n]/.test(s)),
);
const soupLine = fc
  .tuple(fc.boolean(), fc.array(fsuToken, { minLength: 1, maxLength: 8 }))
  .map(([continuation, tokens]) => (continuation ? "/" : "") + tokens.join("/"));
/** The readable status and information lines of the fixtures, so that whole messages are accepted too. */
const wellFormedLines = fixtures("fsu", ".txt")
  .flatMap((text) => text.split(/\r?\n/).slice(2))
  .filter((line) => /^(RCS|MAN|DEP|ARR|RCF|NFD|DLV|DDL|RCT|TFD|DIS|TOA)\/[^/]*\/\d|^(FOH|BKD|OCI|OSI)\//.test(line))
  .filter((line) => !/FRAX|T1K1OO|29FEB|16XYZ|X17450|DOH|^TOA\/LH400\/17OCT\/JFK\/T1K100$/.test(line));
const fsuLine = fc.oneof(
  { arbitrary: fc.constantFrom(...wellFormedLines), weight: 4 },
  { arbitrary: soupLine, weight: 1 },
);
const fsuMessage = fc
  .tuple(
    fc.oneof(
      { arbitrary: fc.constantFrom("FSU/14", "FSU/12", "FSU/15"), weight: 4 },
      { arbitrary: fc.constantFrom("FSU/6", "FSU/", "FSU/999", "QK FRAFMLH", "PDM"), weight: 1 },
    ),
    fc.oneof(
      {
        arbitrary: fc.constantFrom("020-12345675FRAJFK/T1K100", "02012345675", "157-53806270HKGNLU/P2K505.0T10"),
        weight: 4,
      },
      { arbitrary: fc.constantFrom("020-12345676FRAJFK/T1K100", "020-12345675FRAJFK/X", "020-1234567", ""), weight: 1 },
    ),
    fc.array(fsuLine, { minLength: 1, maxLength: 6 }),
  )
  .map(([header, consignment, lines]) => [header, consignment, ...lines].join("\n"));
const fsuText = fc
  .tuple(fc.array(fsuMessage, { minLength: 1, maxLength: 3 }), fc.constantFrom("\n", "\r\n", "\r"))
  .map(([messages, eol]) => messages.join("\n").replace(/\n/g, eol));

describe("the FSU parser", () => {
  it("takes any string without throwing anything but its rejection", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 400 }), fc.string({ unit: "binary", maxLength: 200 })), fsu),
      {
        numRuns: runsInSuite(2_000),
        seed: 16_001,
      },
    );
  });

  it("takes FSU-shaped token soup the same way, and maps what it accepts to valid milestones", () => {
    fc.assert(fc.property(fsuText, fsu), { numRuns: runsInSuite(4_000), seed: 16_002 });
  });

  it("takes mutated fixtures the same way", () => {
    fc.assert(fc.property(mutated(fixtures("fsu", ".txt")), fsu), { numRuns: runsInSuite(3_000), seed: 16_003 });
  });
});

// ---- XFSU -------------------------------------------------------------------------------------------
const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
/** Mostly a valid value; sometimes an invalid or arbitrary one, or none. */
const value = (valid: string[], invalid: string[] = []) =>
  fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 12 },
    { arbitrary: fc.constantFrom(...valid, ...invalid), weight: 1 },
    { arbitrary: fc.string({ maxLength: 20 }), weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 3 },
  );
const element = (name: string, text: string | undefined, attributes = "") =>
  text === undefined ? "" : `<ram:${name}${attributes}>${escape(text)}</ram:${name}>`;
const dateTimes = ["2026-10-16T17:45:00", "2026-10-16T17:45:00+02:00", "2026-10-16T17:45:00.250Z", "2026-10-16T17:45"];
const badDateTimes = [
  "2026-02-30T10:00:00",
  "16OCT1745",
  "",
  "2026-10-16T24:00:00",
  "9999-12-31T23:59:00-01:00",
  "2026-10-16T17:45:00+99:99",
  "1899-12-31T23:00:00Z",
  "9999-12-31T23:30:00",
];
const statusPart = fc
  .record({
    pieces: value(["1", "10", "0"], ["-1", "1.5"]),
    weight: value(["100", "505.5"], ["1e3", ""]),
    unit: fc.constantFrom("KGM", "LBR", "XXX", undefined),
    split: value(["T", "P", "S", "D", "Part"], ["Q"]),
    discrepancy: value(["MSCA", "FDCA"]),
    flight: value(["LH400", "LH8160"], ["LH 400", "123456"]),
    station: value(["FRA", "JFK", "LHR"], ["DOH", "BAD", "FRAX"]),
    at: value(dateTimes, badDateTimes),
    atType: value(["A", "E"]),
    departure: value(dateTimes, badDateTimes),
    departureType: value(["A", "S"]),
    arrival: value(dateTimes, badDateTimes),
    arrivalType: value(["A", "E"]),
  })
  .map(
    (p) =>
      `<ram:AssociatedStatusConsignment>${element("GrossWeightMeasure", p.weight, p.unit ? ` unitCode="${p.unit}"` : "")}` +
      `${element("PieceQuantity", p.pieces)}${element("TransportSplitDescription", p.split)}` +
      `${element("DiscrepancyDescriptionCode", p.discrepancy)}<ram:SpecifiedLogisticsTransportMovement>${element("ID", p.flight)}` +
      `<ram:ArrivalEvent>${element("ArrivalOccurrenceDateTime", p.arrival)}${element("ArrivalDateTimeTypeCode", p.arrivalType)}</ram:ArrivalEvent>` +
      `<ram:DepartureEvent>${element("DepartureOccurrenceDateTime", p.departure)}${element("DepartureDateTimeTypeCode", p.departureType)}</ram:DepartureEvent>` +
      `<ram:SpecifiedLocation>${element("ID", p.station)}</ram:SpecifiedLocation>` +
      `<ram:SpecifiedEvent>${element("OccurrenceDateTime", p.at)}${element("DateTimeTypeCode", p.atType)}</ram:SpecifiedEvent>` +
      `</ram:SpecifiedLogisticsTransportMovement></ram:AssociatedStatusConsignment>`,
  );
const xfsuDocument = fc
  .record({
    awb: value(["020-12345675", "02012345675"], ["020-12345676", "020-1234567"]),
    statuses: fc.array(
      fc.record({
        code: value(
          ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD", "DIS", "TOA", "FOH"],
          ["toString"],
        ),
        parts: fc.array(statusPart, { maxLength: 2 }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
  })
  .map(
    ({ awb, statuses }) =>
      `<?xml version="1.0"?><rsm:StatusMessage xmlns:rsm="iata:statusmessage:1" xmlns:ram="iata:datamodel:3">` +
      `<rsm:MasterConsignment><ram:TransportContractDocument>${element("ID", awb)}</ram:TransportContractDocument>` +
      statuses
        .map((s) => `<ram:ReportedStatus>${element("ReasonCode", s.code)}${s.parts.join("")}</ram:ReportedStatus>`)
        .join("") +
      `</rsm:MasterConsignment></rsm:StatusMessage>`,
  );
/** Random XML: elements of XFSU's names and others, nested, with text that is sometimes not escaped. */
const { node: randomXml } = fc.letrec<{ node: string }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      fc.string({ maxLength: 15 }),
      fc.constantFrom("&amp;", "&lt;", "&#65;", "&unknown;", "<![CDATA[x]]>", "<!-- c -->"),
    ),
    fc
      .tuple(
        fc.constantFrom(
          "StatusMessage",
          "rsm:MasterConsignment",
          "ram:ReportedStatus",
          "ReasonCode",
          "ID",
          "a",
          "b:c",
          "__proto__",
        ),
        fc.array(tie("node"), { maxLength: 4 }),
      )
      .map(([name, inner]) => `<${name}>${inner.join("")}</${name}>`),
  ),
}));

describe("the XFSU parser", () => {
  it("takes any string without throwing anything but its rejection", () => {
    fc.assert(fc.property(fc.string({ maxLength: 400 }), xfsu), { numRuns: runsInSuite(1_000), seed: 16_011 });
  });

  it("takes random XML the same way", () => {
    fc.assert(fc.property(randomXml, xfsu), { numRuns: runsInSuite(2_000), seed: 16_012 });
  });

  it("takes XFSU-shaped documents with arbitrary values the same way, and maps what it accepts to valid milestones", () => {
    fc.assert(fc.property(xfsuDocument, xfsu), { numRuns: runsInSuite(1_200), seed: 16_013 });
  });

  it("takes mutated fixtures the same way", () => {
    fc.assert(fc.property(mutated(fixtures("xfsu", ".xml")), xfsu), { numRuns: runsInSuite(1_500), seed: 16_014 });
  });
});

afterAll(() => {
  // The generators must reach both outcomes, or the properties prove little.
  for (const format of ["FSU", "XFSU"] as const) {
    expect(counts[format].accepted).toBeGreaterThan(runsInSuite(200));
    expect(counts[format].rejected).toBeGreaterThan(runsInSuite(200));
    // The gate's first eighth of the runs makes 62 (FSU) or more: fewer than an eighth of 500.
    expect(counts[format].milestones).toBeGreaterThan(IN_GATE ? 50 : 500);
  }
});
