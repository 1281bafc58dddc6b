import { parseAwb, wrongCheckDigit } from "../domain/awb";
import { isFlightDesignator } from "../domain/flight";
import { isIataCode } from "../domain/iata";
import { isStatusCode } from "../domain/status";
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
  type TimeBasis,
  type UnmappedStatus,
} from "./carrier-message";
import { INSTANT_RANGE, isAcceptedInstant, isRealDate, offsetMinutes } from "../domain/instant";
import { isKnownTimeZone, zonedInstant } from "./message-time";
import { unmappedReason } from "./status-codes";
import { attributeOf, child, children, readXml, textAt, textOf } from "./xml-tree";

/**
 * Cargo-XML XFSU: the StatusMessage (namespace iata:statusmessage:1, data model iata:datamodel:3)
 * of IATA's Cargo-XML toolkit, version 3. Each ReportedStatus (ReasonCode: the status code) and
 * each of its AssociatedStatusConsignment elements is one status; docs/INGESTION.md has the mapping.
 * Namespace prefixes are ignored: elements are known by their local names.
 */

/** xsd:dateTime as Cargo-XML writes it: with an offset (an instant) or without (the station's wall clock). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:\d{2})?$/;
const PIECES = /^\d{1,6}$/;
const WEIGHT = /^\d{1,9}(?:\.\d{1,3})?$/;
/** UN/ECE Recommendation 20 units Cargo-XML weighs in, as Cargo-IMP's weight codes. */
const WEIGHT_UNITS: Readonly<Record<string, "K" | "L">> = { KGM: "K", LBR: "L" };

type Fail = (element: string, text: string | null, reason: string) => void;

/**
 * The statuses of one XFSU message. Throws `CarrierMessageRejected`, naming each offending element,
 * when the XML is not well-formed or not a StatusMessage, the AWB is missing or refused by the check
 * digit policy, or a status with a gateway status code cannot be read. A status with another code
 * never rejects the message.
 */
export function parseXfsu(text: string, options: ParseOptions): CarrierMessage {
  const problems: Problems = new Problems("XFSU");
  if (typeof text !== "string") {
    problems.atMessage("must be the text of an XFSU message");
    problems.reject();
  }
  if (text.length > MAX_MESSAGE_CHARS) {
    problems.atMessage(`is ${text.length} characters long, more than the ${MAX_MESSAGE_CHARS} read`);
    problems.reject();
  }
  const read = readXml(text);
  if (read.problem !== undefined) {
    const line = read.problem.line;
    if (line === null) problems.atMessage(read.problem.reason);
    else problems.atLine(line, text.split(/\r\n|\r|\n/)[line - 1] ?? "", read.problem.reason);
    problems.reject();
  }
  const roots = Object.keys(read.document);
  if (roots.length === 0) problems.atMessage("holds no element");
  else if (roots.length > 1 || roots[0] !== "StatusMessage")
    problems.atElement(roots.join(", "), null, "is not StatusMessage, the root element of a Cargo-XML XFSU");
  problems.throwIfAny();
  const root = read.document.StatusMessage;
  const consignments = children(root, "MasterConsignment");
  if (consignments.length !== 1) {
    problems.atElement(
      "StatusMessage",
      null,
      consignments.length === 0 ? "has no MasterConsignment" : "has more than one MasterConsignment",
    );
    problems.reject();
  }
  const consignment = consignments[0];

  const awbText = textAt(consignment, "TransportContractDocument", "ID");
  const awb = awbText === null ? null : parseAwb(awbText);
  const awbElement = "MasterConsignment/TransportContractDocument/ID";
  if (awbText === null) problems.atElement(awbElement, null, "is missing: it carries the AWB");
  else if (!awb) problems.atElement(awbElement, awbText, "is not an AWB such as 020-12345675");
  else if (options.enforceCheckDigit && !awb.checkDigitValid)
    problems.atElement(awbElement, awbText, `AWB ${wrongCheckDigit(awb.canonical)}`);

  const total = consignmentQuantity(consignment);
  // Without a usable AWB the statuses are read all the same, so that the rejection lists their problems too.
  const context = { awb: awb?.canonical ?? "", totalPieces: total?.totalPieces ?? null, options, problems };
  const statuses: MappedStatus[] = [];
  const unmapped: UnmappedStatus[] = [];
  const reported = children(consignment, "ReportedStatus");
  if (reported.length === 0) problems.atElement("MasterConsignment", null, "has no ReportedStatus");
  const partCount = reported.reduce<number>(
    (sum, s) => sum + Math.max(1, children(s, "AssociatedStatusConsignment").length),
    0,
  );
  if (partCount > MAX_STATUSES_READ) {
    problems.atMessage(`holds more than ${MAX_STATUSES_READ} statuses, the most one message may hold`);
    problems.reject();
  }
  reported.forEach((status, i) => {
    const path = `MasterConsignment/ReportedStatus[${i + 1}]`;
    const code = textAt(status, "ReasonCode");
    if (code === null) {
      problems.atElement(`${path}/ReasonCode`, null, "is missing: it carries the status code");
      return;
    }
    const details = children(status, "AssociatedStatusConsignment");
    // A status without details is still a status: its time is when it was received.
    const parts =
      details.length === 0
        ? [{ node: undefined, path }]
        : details.map((node, j) => ({ node, path: `${path}/AssociatedStatusConsignment[${j + 1}]` }));
    for (const part of parts) {
      const result = readStatus(code, part.node, part.path, context);
      if (result && "milestone" in result) statuses.push(result);
      else if (result) unmapped.push(result);
    }
  });
  if (statuses.length > MAX_EVENTS_PER_CALL)
    problems.atMessage(`holds ${statuses.length} statuses, more than the ${MAX_EVENTS_PER_CALL} one ingestion stores`);
  problems.throwIfAny();

  const location = (name: string) => {
    const id = textAt(consignment, name, "ID");
    return isIataCode(id) ? id : null;
  };
  return {
    format: "XFSU",
    version: textAt(root, "MessageHeaderDocument", "VersionID"),
    awb: awb!.canonical,
    checkDigitValid: awb!.checkDigitValid,
    origin: location("OriginLocation"),
    destination: location("FinalDestinationLocation"),
    quantity: total,
    statuses,
    unmapped,
  };
}

/** The consignment as a whole, as far as the message gives it (never refused: no milestone rests on it). */
function consignmentQuantity(consignment: unknown): Quantity | null {
  const totalText = textAt(consignment, "TotalPieceQuantity") ?? textAt(consignment, "PieceQuantity");
  if (totalText === null || !PIECES.test(totalText)) return null;
  const weightNode = child(consignment, "TotalGrossWeightMeasure") ?? child(consignment, "GrossWeightMeasure");
  const weight = textOf(weightNode);
  return {
    shipment: "T",
    pieces: Number(totalText),
    weight: weight !== null && WEIGHT.test(weight) ? Number(weight) : null,
    weightUnit: unitOf(attributeOf(weightNode, "unitCode")),
    totalPieces: Number(totalText),
  };
}

function unitOf(code: string | null): "K" | "L" | null {
  return code !== null && Object.hasOwn(WEIGHT_UNITS, code) ? WEIGHT_UNITS[code]! : null;
}

interface Context {
  awb: string;
  totalPieces: number | null;
  options: ParseOptions;
  problems: Problems;
}

/** One status (a ReportedStatus and one of its AssociatedStatusConsignment elements). */
function readStatus(
  code: string,
  node: unknown,
  path: string,
  { awb, totalPieces, options, problems }: Context,
): MappedStatus | UnmappedStatus | null {
  const mapped = isStatusCode(code);
  const found = problems.count;
  const fail: Fail = mapped ? (element, text, reason) => problems.atElement(element, text, reason) : () => {};
  const movementPath = `${path}/SpecifiedLogisticsTransportMovement[1]`;
  const movement = child(node, "SpecifiedLogisticsTransportMovement");

  const flightText = textAt(movement, "ID");
  const flight = checked(
    flightText,
    isFlightDesignator,
    `${movementPath}/ID`,
    "is not a flight designator such as LH400",
    fail,
  );
  const stationText = textAt(child(movement, "SpecifiedLocation"), "ID");
  const station = checked(
    stationText,
    isIataCode,
    `${movementPath}/SpecifiedLocation[1]/ID`,
    "is not an IATA airport code",
    fail,
  );
  const quantity = readQuantity(node, path, totalPieces, fail);
  const discrepancy = textAt(node, "DiscrepancyDescriptionCode");
  const carrier = textAt(node, "AssociatedTransferredFromParty", "PrimaryID");

  const time = (name: string, value: string) => ({
    text: textAt(movement, name, value),
    type: textAt(movement, name, value.replace("OccurrenceDateTime", "DateTimeTypeCode")),
    element: `${movementPath}/${name}/${value}`,
  });
  const event = {
    text: textAt(movement, "SpecifiedEvent", "OccurrenceDateTime"),
    type: textAt(movement, "SpecifiedEvent", "DateTimeTypeCode"),
    element: `${movementPath}/SpecifiedEvent/OccurrenceDateTime`,
  };
  const departure = time("DepartureEvent", "DepartureOccurrenceDateTime");
  const arrival = time("ArrivalEvent", "ArrivalOccurrenceDateTime");
  const place = placer(station, stationText, options, fail);

  let occurredAt: Date | null = null;
  let timeBasis: TimeBasis | null = null;
  let toaTimestamp: Date | null = null;
  if (code === "TOA") {
    if (arrival.text === null) fail(arrival.element, null, "is missing: a TOA gives its new time of arrival there");
    else toaTimestamp = place(arrival.text, arrival.element)?.at ?? null;
  }
  // The status's own time; DEP's actual departure, ARR and RCF's actual arrival when it has none.
  const own =
    event.text !== null
      ? event
      : code === "DEP" && departure.type === "A"
        ? departure
        : (code === "ARR" || code === "RCF") && arrival.type === "A"
          ? arrival
          : null;
  if (own?.text) {
    const placed = place(own.text, own.element);
    occurredAt = placed?.at ?? null;
    timeBasis = placed?.basis ?? null;
  } else if (mapped) {
    occurredAt = new Date(options.now);
    timeBasis = "received";
  }
  const dayOf = (value: string | null) => (value !== null && DATE_TIME.test(value) ? value.slice(0, 10) : null);
  const flightDate =
    code === "MAN" || code === "DEP"
      ? dayOf(departure.text)
      : code === "ARR" || code === "RCF" || code === "TOA"
        ? dayOf(arrival.text ?? textAt(movement, "ScheduledArrivalEvent", "ScheduledOccurrenceDateTime"))
        : null;

  // The values read, in a fixed order: the status's canonical text, which its event id hashes.
  const described = Object.entries({
    code,
    flight: flightText,
    station: stationText,
    at: event.text,
    atType: event.type,
    departure: departure.text,
    departureType: departure.type,
    arrival: arrival.text,
    arrivalType: arrival.type,
    pieces: textAt(node, "PieceQuantity"),
    weight: textAt(node, "GrossWeightMeasure"),
    unit: attributeOf(child(node, "GrossWeightMeasure"), "unitCode"),
    split: textAt(node, "TransportSplitDescription"),
    discrepancy,
    carrier,
  })
    .filter(([, value]) => value !== null)
    .map(([key, value]) => `${key}=${value}`)
    .join(" ");
  const record: StatusRecord = {
    eventId: carrierEventId("XFSU", awb, described),
    code,
    source: { line: null, element: path, text: described },
    occurredAt,
    timeBasis,
    station,
    flight,
    flightDate,
    carrier,
    quantity,
    discrepancy,
    toaTimestamp,
  };
  if (!isStatusCode(code)) return { ...record, reason: unmappedReason(code)! };
  if (problems.count > found || occurredAt === null || timeBasis === null) return null;
  return {
    ...record,
    occurredAt,
    timeBasis,
    milestone: { eventId: record.eventId, awb, state: code, occurredAt, toaTimestamp, station, flight },
  };
}

function checked(
  value: string | null,
  valid: (value: string) => boolean,
  element: string,
  reason: string,
  fail: Fail,
): string | null {
  if (value === null) return null;
  if (valid(value)) return value;
  fail(element, value, reason);
  return null;
}

function readQuantity(node: unknown, path: string, totalPieces: number | null, fail: Fail): Quantity | null {
  const piecesText = textAt(node, "PieceQuantity");
  const weightNode = child(node, "GrossWeightMeasure");
  const weightText = textOf(weightNode);
  const split = textAt(node, "TransportSplitDescription")?.charAt(0).toUpperCase() ?? "T";
  if (piecesText !== null && !PIECES.test(piecesText))
    fail(`${path}/PieceQuantity`, piecesText, "is not a number of pieces");
  if (weightText !== null && !WEIGHT.test(weightText))
    fail(`${path}/GrossWeightMeasure`, weightText, "is not a weight such as 100 or 505.5");
  if (!["T", "P", "D", "S"].includes(split))
    fail(`${path}/TransportSplitDescription`, split, "is not T (total), P (part), D (divided) or S (split)");
  if (piecesText === null || !PIECES.test(piecesText) || !["T", "P", "D", "S"].includes(split)) return null;
  return {
    shipment: split as Quantity["shipment"],
    pieces: Number(piecesText),
    weight: weightText !== null && WEIGHT.test(weightText) ? Number(weightText) : null,
    weightUnit: unitOf(attributeOf(weightNode, "unitCode")),
    totalPieces,
  };
}

/**
 * Reads xsd:dateTime values of one status: one with an offset is that instant ("utc"); one without
 * is the wall clock at the status's station, placed with the station's time zone ("local").
 */
function placer(station: string | null, stationText: string | null, options: ParseOptions, fail: Fail) {
  let zone: string | null | undefined;
  return (text: string, element: string): { at: Date; basis: TimeBasis } | null => {
    const match = DATE_TIME.exec(text);
    const number = (group: number) => Number(match?.[group] ?? "0");
    const [year, month, day, hour, minute, second] = [number(1), number(2), number(3), number(4), number(5), number(6)];
    const millisecond = Number((match?.[7] ?? "0").padEnd(3, "0").slice(0, 3));
    const offset = match?.[8];
    if (!match || year < 1900 || !isRealDate(year, month, day) || hour > 23 || minute > 59 || second > 59) {
      fail(element, text, "is not a date-time such as 2026-10-16T13:17:00, with or without an offset");
      return null;
    }
    const local = { year, month, day, hour, minute, second, millisecond };
    const accepted = (at: Date) => {
      if (isAcceptedInstant(at)) return true;
      fail(element, text, `is outside the instants accepted, ${INSTANT_RANGE}`);
      return false;
    };
    if (offset !== undefined) {
      const minutes = offsetMinutes(offset);
      if (minutes === null) {
        fail(element, text, "has an offset beyond ±14:00");
        return null;
      }
      const at = new Date(Date.UTC(year, month - 1, day, hour, minute, second, millisecond) - minutes * 60_000);
      return accepted(at) ? { at, basis: "utc" } : null;
    }
    if (zone === undefined) {
      zone = null;
      const found = station === null ? null : options.timeZoneOf(station);
      // A station that is there but is no airport code has been reported already.
      if (station === null && stationText !== null) return null;
      if (station === null)
        fail(element, text, "has no offset, and the status has no station whose time zone would place it");
      else if (found === null)
        fail(element, text, `has no offset, and the station data has no time zone for ${station}`);
      else if (!isKnownTimeZone(found))
        fail(
          element,
          text,
          `has no offset, and the station data gives ${station} an unknown time zone, ${JSON.stringify(found)}`,
        );
      else zone = found;
    }
    const at = zone === null ? null : zonedInstant(local, zone);
    return at && accepted(at) ? { at, basis: "local" } : null;
  };
}
