import { createHash } from "node:crypto";
import type { FieldError } from "../domain/checker";
import type { MilestoneInput } from "../milestones/milestone.validate";
import type { CarrierStatusRow } from "../milestones/carrier-status.store";

/**
 * What the carrier-message parsers (Cargo-IMP FSU, `fsu.parse.ts`; Cargo-XML XFSU, `xfsu.parse.ts`)
 * produce: the message's statuses as the gateway's milestones, in the shape JSON ingestion hands to
 * the milestone service, and the statuses that are not milestones, for the history. docs/INGESTION.md
 * has the mapping.
 */

export type CarrierFormat = "FSU" | "XFSU";

/** The largest message text read (the same as a JSON body); longer ones are refused unread. */
export const MAX_MESSAGE_CHARS = 1_048_576;
/**
 * The most statuses and lines, mapped or not, read from one text: a bound on the work a text can
 * ask for (at most 1,000 of them may be gateway statuses, as in a JSON call).
 */
export const MAX_STATUSES_READ = 10_000;

export interface ParseOptions {
  /** AWB_CHECK_DIGIT=enforce: an AWB with a wrong check digit rejects the message, as in JSON ingestion. */
  enforceCheckDigit: boolean;
  /** When the message was received: places dates given without a year, and dates lines that give no time. */
  now: Date;
  /** The IANA time zone of a station (from the station data), or null when it is not known. */
  timeZoneOf: (station: string) => string | null;
}

/**
 * How a status's `occurredAt` was found: "utc", a time with an offset (Cargo-XML); "local", a station's
 * wall-clock time placed with its time zone; "day", a day without a time of day, dated when received
 * but no later than the end of that day at the station; "received", no date at all, dated when received.
 */
export type TimeBasis = "utc" | "local" | "day" | "received";

/** Pieces and weight of a status, or of the whole consignment. */
export interface Quantity {
  /** T: the total consignment; P: part of it; D, S: divided or split (part shipments too). */
  shipment: "T" | "P" | "D" | "S";
  pieces: number;
  weight: number | null;
  /** K: kilograms, L: pounds (Cargo-XML's KGM and LBR are read as K and L). */
  weightUnit: "K" | "L" | null;
  /** The consignment's total pieces, when a part shipment gives it (or the consignment line does). */
  totalPieces: number | null;
}

/** One status of a message, mapped to a milestone or not. */
export interface StatusRecord {
  /**
   * Derived from the message content (format, AWB, the status's text), so that a message sent again
   * gives the same ids; for a mapped status it is the milestone's `eventId`, its idempotency key.
   */
  eventId: string;
  /** The status code as the message gives it (RCS, FOH, …; an information line's identifier, OCI, …). */
  code: string;
  /** Where it was: the FSU line(s), or the XFSU element. */
  source: { line: number | null; element: string | null; text: string };
  occurredAt: Date | null;
  timeBasis: TimeBasis | null;
  station: string | null;
  flight: string | null;
  /**
   * MAN, DEP: the day of the flight's departure; ARR, RCF, TOA: of its arrival (YYYY-MM-DD, as the
   * FSU line's day or the date of the XFSU's DepartureEvent or ArrivalEvent says it).
   */
  flightDate: string | null;
  /** The carrier a consignment was received from or transferred to (RCT, TFD). */
  carrier: string | null;
  quantity: Quantity | null;
  /** DIS: the discrepancy code (MSCA, FDCA, …). */
  discrepancy: string | null;
  toaTimestamp: Date | null;
}

/** A status with a gateway status code: its milestone goes to the milestone service as is. */
export interface MappedStatus extends StatusRecord {
  occurredAt: Date;
  timeBasis: TimeBasis;
  milestone: MilestoneInput;
}

/** A status or line the gateway does not deliver (FOH, customs codes, OCI lines…), kept for the history. */
export interface UnmappedStatus extends StatusRecord {
  /** Why it is not a milestone. */
  reason: string;
}

export interface CarrierMessage {
  format: CarrierFormat;
  /** "14" for FSU/14; Cargo-XML's VersionID, e.g. "3.00"; null when an XFSU does not say. */
  version: string | null;
  /** Canonical, "020-12345675". */
  awb: string;
  checkDigitValid: boolean;
  origin: string | null;
  destination: string | null;
  /** The consignment as a whole, when the message gives it. */
  quantity: Quantity | null;
  statuses: MappedStatus[];
  unmapped: UnmappedStatus[];
}

/**
 * One reason a message was rejected. `field` names the place ("line 3", or an element path such as
 * "MasterConsignment/ReportedStatus[2]/ReasonCode") and `message` says why, quoting the text, so the
 * pair reads on its own as the `errors` of a problem+json answer.
 */
export interface MessageProblem extends FieldError {
  line: number | null;
  element: string | null;
  /** The offending text (a line, an element's value), cut to 100 characters. */
  text: string | null;
  reason: string;
}

/** At most this many problems are listed; a message with more is refused all the same. */
export const MAX_PROBLEMS = 100;

/** The parsers' one way of refusing a message: every problem found, each naming its place. */
export class CarrierMessageRejected extends Error {
  override readonly name = "CarrierMessageRejected";

  constructor(
    readonly format: CarrierFormat,
    readonly problems: readonly MessageProblem[],
  ) {
    const first = problems.slice(0, 3).map((p) => `${p.field}: ${p.message}`);
    const more = problems.length > 3 ? `; and ${problems.length - 3} more` : "";
    super(`${format} message rejected: ${first.join("; ")}${more}`);
  }
}

export function clip(text: string, length = 100): string {
  return text.length > length ? `${text.slice(0, length)}…` : text;
}

/** Collects problems as they are found, so a rejection lists them all. */
export class Problems {
  readonly list: MessageProblem[] = [];
  private found = 0;

  constructor(private readonly format: CarrierFormat) {}

  /** Problems found so far, listed or not. */
  get count(): number {
    return this.found;
  }

  atLine(line: number, text: string, reason: string): void {
    this.add({ line, element: null, text, reason, field: `line ${line}` });
  }

  /** A problem of the message as a whole (its size, its number of statuses). */
  atMessage(reason: string): void {
    this.add({ line: null, element: null, text: null, reason, field: "message" });
  }

  atElement(element: string, text: string | null, reason: string): void {
    this.add({ line: null, element, text, reason, field: element });
  }

  private add(problem: Omit<MessageProblem, "message" | "text"> & { text: string | null }): void {
    this.found++;
    if (this.list.length >= MAX_PROBLEMS) return;
    const text = problem.text === null ? null : clip(problem.text);
    const message = text === null || text === "" ? problem.reason : `${problem.reason}, in ${JSON.stringify(text)}`;
    this.list.push({ ...problem, text, message });
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw new CarrierMessageRejected(this.format, this.list);
  }

  reject(): never {
    throw new CarrierMessageRejected(this.format, this.list);
  }
}

/**
 * A status's event id: "fsu:" or "xfsu:" and the SHA-256 (base64url) of the AWB and the status's
 * canonical text (its line(s) for FSU; its elements' values for XFSU). The same status sent again,
 * in this or another message, maps to the same id; the prefix keeps these apart from ids callers give.
 */
export function carrierEventId(format: CarrierFormat, awb: string, statusText: string): string {
  const hash = createHash("sha256").update(`${awb}\n${statusText}`).digest("base64url");
  return `${format.toLowerCase()}:${hash}`;
}

/** Every mapped status's milestone, in message order: what the milestone service's `ingest` takes. */
export function milestonesOf(messages: readonly CarrierMessage[]): MilestoneInput[] {
  return messages.flatMap((m) => m.statuses.map((s) => s.milestone));
}

/** Every status of the messages, mapped or not, as the history records it (carrier-status.store.ts). */
export function statusRowsOf(messages: readonly CarrierMessage[]): CarrierStatusRow[] {
  return messages.flatMap((m) => [
    ...m.statuses.map((s) => statusRow(m, s, null)),
    ...m.unmapped.map((s) => statusRow(m, s, s.reason)),
  ]);
}

function statusRow(message: CarrierMessage, status: StatusRecord, reason: string | null): CarrierStatusRow {
  const { quantity } = status;
  return {
    statusKey: status.eventId,
    awb: message.awb,
    code: status.code,
    mapped: reason === null,
    reason,
    format: message.format,
    sourceLine: status.source.line,
    sourceElement: status.source.element,
    sourceText: status.source.text,
    occurredAt: status.occurredAt,
    timeBasis: status.timeBasis,
    station: status.station,
    flight: status.flight,
    flightDate: status.flightDate,
    carrierCode: status.carrier,
    discrepancy: status.discrepancy,
    toaTimestamp: status.toaTimestamp,
    shipment: quantity?.shipment ?? null,
    pieces: quantity?.pieces ?? null,
    weight: quantity?.weight ?? null,
    weightUnit: quantity?.weightUnit ?? null,
    totalPieces: quantity?.totalPieces ?? null,
  };
}
