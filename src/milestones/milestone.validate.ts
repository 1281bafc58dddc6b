import { awbProblem, parseAwb, wrongCheckDigit } from "../domain/awb";
import { Checker, join } from "../domain/checker";
import { isFlightDesignator } from "../domain/flight";
import { isIataCode } from "../domain/iata";
import { readIsoInstant } from "../domain/instant";
import { DERIVED_EVENT_ID_PREFIXES, derivedPrefixOf } from "../domain/event-id";
import { isStatusCode, STATUS_CODES, type StatusCode } from "../domain/status";
import { validationError } from "../errors";

/** CONTRACT §10: at most 1,000 events per ingestion call. */
export const MAX_EVENTS_PER_CALL = 1_000;
const EVENT_KEYS = ["eventId", "awb", "state", "timestamp", "toaTimestamp", "station", "flight"] as const;

export interface MilestoneInput {
  /**
   * The caller's id for the event (makes a retry of the same call idempotent), or one a carrier
   * message's reader derived from the message (its prefix reserved: domain/event-id.ts).
   */
  eventId: string | null;
  /**
   * An event of a broker message with neither eventId nor timestamp: the message's identity and the
   * event's place in it, so that the message delivered again is the same event (domain/event-id.ts).
   */
  messageKey?: string | undefined;
  awb: string;
  state: StatusCode;
  occurredAt: Date;
  toaTimestamp: Date | null;
  station: string | null;
  flight: string | null;
}

function timestamp(check: Checker, value: unknown, field: string): Date | null {
  if (value === undefined || value === null) return null;
  const read = typeof value === "string" ? readIsoInstant(value) : null;
  if (read === null || "problem" in read) {
    const why = read === null ? "must be an ISO 8601 date-time with an offset" : read.problem;
    check.fail(field, `${why}, e.g. "2026-11-21T10:15:30Z", got ${JSON.stringify(value)}`);
    return null;
  }
  return read.at;
}

/** Why a well-formed station code is refused: one wording for every input (JSON, FSU, XFSU, the broker). */
export function unknownStationProblem(code: string): string {
  return `${code} is not one of the carrier's stations (GET …/stations/stationcodes lists them)`;
}

/**
 * One event or a list of up to 1,000 (CONTRACT §6). Every problem of every event is reported, named
 * by its position; nothing is stored unless all are valid.
 */
export function parseMilestones(
  body: unknown,
  {
    enforceCheckDigit,
    now,
    isStation,
    messageIdentity,
  }: {
    enforceCheckDigit: boolean;
    now: Date;
    /** Whether a code is one of the carrier's stations (the station data): an event elsewhere is refused. */
    isStation: (code: string) => boolean;
    /** The identity of the broker message the body came in (ingestion/broker-message.ts `messageIdentityOf`). */
    messageIdentity?: string | undefined;
  },
): MilestoneInput[] {
  const check = new Checker();
  const list = Array.isArray(body) ? body : [body];
  if (Array.isArray(body) && body.length === 0)
    throw validationError([{ field: "body", message: "must hold at least one event" }]);
  if (list.length > MAX_EVENTS_PER_CALL)
    throw validationError([
      { field: "body", message: `must hold at most ${MAX_EVENTS_PER_CALL} events, got ${list.length}` },
    ]);
  const events: MilestoneInput[] = [];
  list.forEach((value, i) => {
    const field = Array.isArray(body) ? `[${i}]` : "";
    const at = (key: string) => (field === "" ? key : join(field, key));
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      check.fail(field || "body", "must be an event object");
      return;
    }
    const event = value as Record<string, unknown>;
    for (const key of Object.keys(event))
      if (!(EVENT_KEYS as readonly string[]).includes(key)) check.fail(at(key), "is not a known field");
    const eventId =
      event.eventId === undefined || event.eventId === null
        ? null
        : check.string(event.eventId, at("eventId"), { maxLength: 200 });
    const derived = eventId === null ? undefined : derivedPrefixOf(eventId);
    if (derived !== undefined)
      check.fail(
        at("eventId"),
        `must not start with "${derived}": ${DERIVED_EVENT_ID_PREFIXES.join(", ")} are reserved for the ids the gateway derives from carrier messages`,
      );
    let awb = "";
    const awbWrong = awbProblem(event.awb);
    if (awbWrong !== null) check.fail(at("awb"), awbWrong);
    else {
      const parsed = parseAwb(event.awb as string)!;
      if (enforceCheckDigit && !parsed.checkDigitValid) check.fail(at("awb"), wrongCheckDigit(parsed.canonical));
      else awb = parsed.canonical;
    }
    let state = "";
    if (typeof event.state !== "string") check.fail(at("state"), "is required: one status code (RCS … TOA)");
    else {
      state = event.state.trim().toUpperCase();
      if (!isStatusCode(state))
        check.fail(
          at("state"),
          `must be one status code (${STATUS_CODES.join(", ")}), got ${JSON.stringify(event.state)}`,
        );
    }
    const occurredAt = timestamp(check, event.timestamp, at("timestamp")) ?? now;
    const toaTimestamp = timestamp(check, event.toaTimestamp, at("toaTimestamp"));
    if (toaTimestamp && state !== "TOA" && isStatusCode(state))
      check.fail(at("toaTimestamp"), `is only for TOA events, not ${state}`);
    let station: string | null = null;
    if (event.station !== undefined && event.station !== null) {
      if (!isIataCode(event.station))
        check.fail(
          at("station"),
          `must be an IATA station code of three upper-case letters, got ${JSON.stringify(event.station)}`,
        );
      else if (!isStation(event.station)) check.fail(at("station"), unknownStationProblem(event.station));
      else station = event.station;
    }
    let flight: string | null = null;
    if (event.flight !== undefined && event.flight !== null) {
      if (!isFlightDesignator(event.flight))
        check.fail(at("flight"), `must be a flight designator such as LH8160, got ${JSON.stringify(event.flight)}`);
      else flight = event.flight;
    }
    const untimed = eventId === null && (event.timestamp === undefined || event.timestamp === null);
    events.push({
      eventId,
      ...(untimed && messageIdentity !== undefined ? { messageKey: `${messageIdentity}:${i}` } : {}),
      awb,
      state: state as StatusCode,
      occurredAt,
      toaTimestamp,
      station,
      flight,
    });
  });
  if (!check.ok) throw validationError(check.problems);
  return events;
}
