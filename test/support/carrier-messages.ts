import {
  type CarrierMessage,
  CarrierMessageRejected,
  type MappedStatus,
  type StatusRecord,
} from "../../src/ingestion/carrier-message";
import { derivedPrefixOf } from "../../src/domain/event-id";
import { type MilestoneInput, parseMilestones } from "../../src/milestones/milestone.validate";

/** The JSON event a client would send for this milestone (CONTRACT §6). */
export function jsonEventOf(milestone: MilestoneInput) {
  return {
    eventId: milestone.eventId,
    awb: milestone.awb,
    state: milestone.state,
    timestamp: milestone.occurredAt.toISOString(),
    toaTimestamp: milestone.toaTimestamp?.toISOString() ?? null,
    station: milestone.station,
    flight: milestone.flight,
  };
}

/**
 * JSON ingestion reads the milestone's JSON event back into the same milestone — but for its
 * eventId: the id the gateway derived ("fsu:…", "xfsu:…"), which a caller may not send.
 */
export function expectJsonReadsTheSame(milestone: MilestoneInput, now: Date): void {
  expect(derivedPrefixOf(milestone.eventId ?? "")).toBeDefined();
  const asCallerWouldSend = { ...milestone, eventId: null };
  // Any station: the parsers do not check the station data (readCarrierMessage does, as JSON ingestion).
  expect(
    parseMilestones(jsonEventOf(asCallerWouldSend), { enforceCheckDigit: true, now, isStation: () => true }),
  ).toEqual([asCallerWouldSend]);
}

/** A status's milestone is made of the status's own fields, and is what JSON ingestion would read. */
export function expectMilestoneOfStatus(message: CarrierMessage, status: MappedStatus, now: Date): void {
  expect(status.milestone).toEqual({
    eventId: status.eventId,
    awb: message.awb,
    state: status.code,
    occurredAt: status.occurredAt,
    toaTimestamp: status.toaTimestamp,
    station: status.station,
    flight: status.flight,
  });
  expectJsonReadsTheSame(status.milestone, now);
}

/** A status as the parser tests' tables write it (its place, line or element, added by each test). */
export function statusView(s: StatusRecord) {
  const q = s.quantity;
  return {
    code: s.code,
    at: s.occurredAt?.toISOString() ?? null,
    basis: s.timeBasis,
    station: s.station,
    flight: s.flight,
    ...(s.flightDate ? { flightDate: s.flightDate } : {}),
    ...(s.toaTimestamp ? { toa: s.toaTimestamp.toISOString() } : {}),
    ...(q ? { q: `${q.shipment}${q.pieces}${q.weightUnit ?? ""}${q.weight ?? ""} of ${q.totalPieces}` } : {}),
    ...(s.discrepancy ? { discrepancy: s.discrepancy } : {}),
    ...(s.carrier ? { carrier: s.carrier } : {}),
  };
}

/** The problems (place, reason) a parse rejects the message with; throws if it accepts it. */
export function problemsOfParse(name: string, parse: () => unknown): Array<[string, string]> {
  try {
    parse();
  } catch (error) {
    if (error instanceof CarrierMessageRejected) return error.problems.map((p) => [p.field, p.reason]);
    throw error;
  }
  throw new Error(`${name} was accepted`);
}
