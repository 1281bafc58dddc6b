import { parseAwb, wrongCheckDigit } from "../domain/awb";
import { isFlightDesignator } from "../domain/flight";
import { isIataCode } from "../domain/iata";
import { isStatusCode, type StatusCode } from "../domain/status";
import { MAX_EVENTS_PER_CALL } from "../milestones/milestone.validate";
import {
  type CarrierMessage,
  carrierEventId,
  MAX_MESSAGE_CHARS,
  MAX_STATUSES_READ,
  type MappedStatus,
  type ParseOptions,
  Problems,
  type Quantity,
  type StatusRecord,
  type UnmappedStatus,
} from "./carrier-message";
import {
  type DayMonth,
  isDayMonthLike,
  type LineReading,
  type LineShape,
  isDiscrepancyCodeLike,
  isQuantityLike,
  isRouteLike,
  type Read,
  readAirport,
  readCarrier,
  readDayMonth,
  readFlight,
  readQuantity,
  readTimeInfo,
} from "./fsu-fields";
import { placeTimes, type LineDate } from "./fsu-times";
import { isInformationLine, unmappedReason } from "./status-codes";

/**
 * Cargo-IMP FSU (Status Update) messages, read with the FSU/14 element layout of the Cargo-IMP
 * Manual (34th and last edition), whatever their version among `FSU_VERSIONS`. A text may hold
 * several messages, each starting at its "FSU/<version>" line; docs/INGESTION.md describes what is
 * read from each line and how it maps to milestones.
 */

/** The FSU versions read; older ones are refused rather than read with a layout that may not be theirs. */
export const FSU_VERSIONS: readonly string[] = ["12", "13", "14", "15", "16"];

const MESSAGE_IDENTIFIER = /^FSU\/(\d{1,3})$/;
/** Lines the transmission adds around a message: Type B address and origin lines, PDM, PART/n/CONT. */
const TRANSMISSION_LINES = [
  /^PDM$/,
  /^Q[A-Z](?: [A-Z0-9]{7,8})+$/,
  /^\.[A-Z0-9]{7,8}(?: \S+)*$/,
  /^PART\/\d{1,2}\/(?:CONT|LAST)$/,
];
/** AWB (hyphen optional), optional origin and destination, optional quantity: "020-12345675FRAJFK/T1K100". */
const CONSIGNMENT = /^(\d{3})-?(\d{8})(?:([A-Z]{3})([A-Z]{3}))?(?:\/(.*))?$/;
/** A text element: three letters and a slant (or three letters alone, a status line with nothing after its code). */
const ELEMENT = /^([A-Z]{3})(?:\/|$)/;

/** Each gateway status code's line layout (`LineShape` in fsu-fields.ts). */
const SHAPES: Readonly<Record<StatusCode, LineShape>> = {
  RCS: "event",
  MAN: "departure",
  DEP: "departure",
  ARR: "arrival",
  RCF: "arrival",
  NFD: "event",
  DLV: "event",
  DDL: "event",
  RCT: "transfer",
  TFD: "transfer",
  DIS: "discrepancy",
  TOA: "arrival",
};

interface Line {
  no: number;
  text: string;
}

/**
 * Every FSU message of `text`, each status line mapped to a milestone or kept as unmapped. Throws
 * `CarrierMessageRejected`, naming each offending line, when a message is malformed: no FSU line, a
 * bad consignment line, an AWB whose check digit the policy refuses, or a line with a gateway status
 * code that cannot be read. A line with another code never rejects the message.
 */
export function parseFsu(text: string, options: ParseOptions): CarrierMessage[] {
  const problems: Problems = new Problems("FSU");
  if (typeof text !== "string") {
    problems.atMessage("must be the text of FSU messages");
    problems.reject();
  }
  if (text.length > MAX_MESSAGE_CHARS) {
    problems.atMessage(`is ${text.length} characters long, more than the ${MAX_MESSAGE_CHARS} read`);
    problems.reject();
  }
  const drafts: { header: Line; body: Line[] }[] = [];
  const before: Line[] = [];
  text.split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = { no: i + 1, text: raw.trim() };
    if (line.text === "" || TRANSMISSION_LINES.some((pattern) => pattern.test(line.text))) return;
    // No Cargo-IMP character, and no text the database can store: the whole message is refused.
    if (line.text.includes("\u0000")) problems.atLine(line.no, line.text, "holds the NUL character (U+0000)");
    if (line.text.startsWith("FSU/")) drafts.push({ header: line, body: [] });
    else if (drafts.length > 0) drafts.at(-1)!.body.push(line);
    else before.push(line);
  });
  if (drafts.length === 0) {
    problems.atLine(
      before[0]?.no ?? 1,
      before[0]?.text ?? "",
      "holds no FSU/<version> line: not a Cargo-IMP FSU message",
    );
    problems.reject();
  }
  for (const line of before) problems.atLine(line.no, line.text, "comes before the first FSU/<version> line");
  const lines = drafts.reduce((sum, draft) => sum + draft.body.length, 0);
  if (lines > MAX_STATUSES_READ + drafts.length) {
    problems.atMessage(`holds more than ${MAX_STATUSES_READ} status lines, the most one text may hold`);
    problems.reject();
  }
  const messages = drafts.map((draft) => readMessage(draft.header, draft.body, options, problems));
  const statuses = messages.reduce((sum, m) => sum + (m?.statuses.length ?? 0), 0);
  if (statuses > MAX_EVENTS_PER_CALL)
    problems.atMessage(`holds ${statuses} statuses, more than the ${MAX_EVENTS_PER_CALL} one ingestion stores`);
  problems.throwIfAny();
  return messages as CarrierMessage[];
}

function readMessage(header: Line, body: Line[], options: ParseOptions, problems: Problems): CarrierMessage | null {
  const found = problems.count;
  const version = MESSAGE_IDENTIFIER.exec(header.text)?.[1];
  if (version === undefined) problems.atLine(header.no, header.text, "is not a message identifier such as FSU/14");
  else if (!FSU_VERSIONS.includes(version))
    problems.atLine(header.no, header.text, `FSU/${version} is not read (versions read: FSU/12 to FSU/16)`);
  const [first, ...rest] = body;
  if (!first) {
    problems.atLine(header.no, header.text, "is followed by no consignment line (such as 020-12345675FRAJFK/T1K100)");
    return null;
  }
  const consignment = readConsignment(first, options, problems);
  if (!consignment) return null;

  // A line starting with a slant continues the line before it (Cargo-IMP's continuation lines).
  const elements: Line[][] = [];
  for (const line of rest) {
    if (line.text.startsWith("/") && elements.length > 0) elements.at(-1)!.push(line);
    else elements.push([line]);
  }
  if (elements.length === 0) problems.atLine(first.no, first.text, "is followed by no status line");

  const statuses: MappedStatus[] = [];
  const unmapped: UnmappedStatus[] = [];
  for (const lines of elements) {
    const status = readElement(lines, consignment, options, problems);
    if (status && "milestone" in status) statuses.push(status);
    else if (status) unmapped.push(status);
  }
  if (problems.count > found) return null;
  return { format: "FSU", version: version ?? null, ...consignment, statuses, unmapped };
}

interface Consignment {
  awb: string;
  checkDigitValid: boolean;
  origin: string | null;
  destination: string | null;
  quantity: Quantity | null;
}

function readConsignment(line: Line, options: ParseOptions, problems: Problems): Consignment | null {
  const match = CONSIGNMENT.exec(line.text);
  if (!match) {
    problems.atLine(
      line.no,
      line.text,
      "is not a consignment line: an AWB such as 020-12345675, origin and destination (FRAJFK), quantity (/T1K100)",
    );
    return null;
  }
  const [, prefix, serial, origin, destination, tail] = match as unknown as [
    string,
    string,
    string,
    ...(string | undefined)[],
  ];
  const awb = parseAwb(`${prefix}-${serial}`)!;
  if (options.enforceCheckDigit && !awb.checkDigitValid)
    problems.atLine(line.no, line.text, `AWB ${wrongCheckDigit(awb.canonical)}`);
  let quantity: Quantity | null = null;
  const token = tail?.split("/")[0];
  if (token) {
    const read = readQuantity(token);
    if (read.problem !== undefined) problems.atLine(line.no, line.text, `the consignment's ${read.problem}`);
    else quantity = read.value;
  }
  return {
    awb: awb.canonical,
    checkDigitValid: awb.checkDigitValid,
    origin: origin ?? null,
    destination: destination ?? null,
    quantity,
  };
}

function readElement(
  lines: Line[],
  consignment: Consignment,
  options: ParseOptions,
  problems: Problems,
): MappedStatus | UnmappedStatus | null {
  const first = lines[0]!;
  const text = lines.map((l) => l.text).join("\n");
  const code = ELEMENT.exec(first.text)?.[1];
  const base = {
    eventId: carrierEventId("FSU", consignment.awb, text),
    code: code ?? first.text.split("/")[0]!.slice(0, 10),
    source: { line: first.no, element: null, text },
  };
  const tokens = first.text.split("/");
  const totalPieces = consignmentTotal(consignment.quantity);

  if (code === undefined || !isStatusCode(code)) {
    const reason =
      code === undefined ? "is not a status line (a three-letter code and a slant)" : unmappedReason(code)!;
    // Only a status line is read for a time, a place and a quantity; other lines are kept as text.
    const details =
      code === undefined || isInformationLine(code) ? NOTHING_READ : readLoosely(tokens, totalPieces, options);
    return { ...base, ...details, reason };
  }

  const found = problems.count;
  const fail = (reason: string) => problems.atLine(first.no, first.text, reason);
  const shape = SHAPES[code];
  const reading = readShape(shape, tokens, fail);
  const times = placeTimes(code, shape, reading, options, fail);
  if (!times && problems.count === found) fail("has no time that could be placed");
  if (problems.count > found || !times) return null;
  const record = {
    ...base,
    ...times,
    station: reading.station,
    flight: reading.flight,
    carrier: reading.carrier,
    quantity: withTotal(reading.quantity, totalPieces),
    discrepancy: reading.discrepancy,
  };
  return {
    ...record,
    milestone: {
      eventId: record.eventId,
      awb: consignment.awb,
      state: code,
      occurredAt: times.occurredAt,
      toaTimestamp: times.toaTimestamp,
      station: reading.station,
      flight: reading.flight,
    },
  };
}

function take<T>(read: Read<T>, fail: (reason: string) => void): T | null {
  if (read.problem !== undefined) {
    fail(read.problem);
    return null;
  }
  return read.value;
}

/** Reads a gateway status line by its layout (see `LineShape`), reporting what does not fit. */
function readShape(shape: LineShape, tokens: readonly string[], fail: (reason: string) => void): LineReading {
  const r: LineReading = {
    flight: null,
    carrier: null,
    date: null,
    station: null,
    from: null,
    to: null,
    quantity: null,
    departureTime: null,
    arrivalTime: null,
    discrepancy: null,
  };
  let i = 1;
  if (shape === "transfer") r.carrier = take(readCarrier(tokens[i++]), fail);
  if (shape === "departure" || shape === "arrival" || shape === "discrepancy") {
    // The flight may be empty ("DIS//16OCT…") or left out altogether ("DIS/16OCT…").
    const token = tokens[i];
    const omitted =
      token === undefined || isDayMonthLike(token) || (shape === "departure" && /^[A-Z]{3,6}$/.test(token));
    if (token === "") i++;
    else if (!omitted) r.flight = take(readFlight(tokens[i++]!), fail);
  }
  const date = tokens[i];
  if (shape === "departure") {
    // MAN and DEP may leave the flight's day out too.
    if (date === "") i++;
    else if (date !== undefined && isDayMonthLike(date)) r.date = take(readDayMonth(tokens[i++]!), fail);
  } else {
    i++;
    if (date === undefined || date === "") fail("has no day and month (such as 16OCT) where its layout puts them");
    else r.date = take(readDayMonth(date), fail);
  }
  const airports = tokens[i++];
  if ((shape === "departure" || shape === "arrival") && airports !== undefined && isRouteLike(airports)) {
    r.from = airports.slice(0, 3);
    r.to = airports.slice(3);
    r.station = shape === "departure" ? r.from : r.to;
  } else {
    const what = shape === "departure" ? "airports of departure and arrival (FRAJFK)" : "airport";
    r.station = take(readAirport(airports, what), fail);
    if (shape === "departure") r.from = r.station;
    if (shape === "arrival") r.to = r.station;
  }
  const rest = tokens.slice(i);
  if (shape === "discrepancy") {
    // Cargo-IMP puts the discrepancy code before the quantity; either order is read.
    for (const token of rest) {
      if (r.discrepancy === null && isDiscrepancyCodeLike(token)) r.discrepancy = token;
      else if (r.quantity === null && isQuantityLike(token)) r.quantity = take(readQuantity(token), fail);
    }
    return r;
  }
  // The quantity is mandatory in Cargo-IMP; a line without one is read all the same. For event and
  // transfer lines what follows it (a name, volume, density) is kept in the text, not read.
  let next = 0;
  if (rest[0] !== undefined && isQuantityLike(rest[0])) r.quantity = take(readQuantity(rest[next++]!), fail);
  if (shape === "departure" || shape === "arrival") {
    const [departure, arrival] = [rest[next], rest[next + 1]];
    if (departure) r.departureTime = take(readTimeInfo(departure), (p) => fail(`time of departure: ${p}`));
    if (arrival) r.arrivalTime = take(readTimeInfo(arrival), (p) => fail(`time of arrival: ${p}`));
  }
  return r;
}

/** The consignment's total pieces: those of a total consignment line, or the total a part line gives. */
function consignmentTotal(quantity: Quantity | null): number | null {
  if (!quantity) return null;
  return quantity.shipment === "T" ? quantity.pieces : quantity.totalPieces;
}

function withTotal(quantity: Quantity | null, total: number | null): Quantity | null {
  return quantity && { ...quantity, totalPieces: quantity.totalPieces ?? total };
}

const NOTHING_READ: Omit<StatusRecord, "eventId" | "code" | "source"> = {
  occurredAt: null,
  timeBasis: null,
  flightDate: null,
  toaTimestamp: null,
  station: null,
  flight: null,
  carrier: null,
  quantity: null,
  discrepancy: null,
};

/**
 * An unmapped status line, read as far as it goes and never refused: the first day+month, airport (or pair of
 * airports), quantity and flight designator found in it, wherever they are.
 */
function readLoosely(
  tokens: readonly string[],
  totalPieces: number | null,
  options: ParseOptions,
): Omit<StatusRecord, "eventId" | "code" | "source"> {
  let date: DayMonth | null = null;
  let station: string | null = null;
  let route: string | null = null;
  let quantity: Quantity | null = null;
  let flight: string | null = null;
  for (const token of tokens.slice(1)) {
    if (!date && isDayMonthLike(token)) date = readDayMonth(token).value ?? null;
    else if (!quantity && isQuantityLike(token)) quantity = readQuantity(token).value ?? null;
    else if (!station && isIataCode(token)) station = token;
    else if (!route && isRouteLike(token)) route = token;
    else if (!flight && isFlightDesignator(token)) flight = token;
  }
  station ??= route?.slice(0, 3) ?? null;
  const reading: LineDate = { date, station };
  const times = placeTimes(null, null, reading, options, () => {});
  return {
    occurredAt: times?.occurredAt ?? null,
    timeBasis: times?.timeBasis ?? null,
    flightDate: null,
    toaTimestamp: null,
    station,
    flight,
    carrier: null,
    quantity: withTotal(quantity, totalPieces),
    discrepancy: null,
  };
}
