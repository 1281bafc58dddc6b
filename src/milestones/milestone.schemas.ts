/**
 * JSON schemas of the milestone routes. A request the schema refuses is explained by
 * `parseMilestones` (milestone.validate.ts), which GraphQL uses too and which keeps the rules a schema
 * cannot say: a state in any case, a real calendar date, toaTimestamp only on TOA, the check digit.
 */
import { STATUS_CODES } from "../domain/status";
import { objectSchema, PATTERNS } from "../http/schema";
import type { IngestResult } from "./milestone.service";
import { MAX_EVENTS_PER_CALL } from "./milestone.validate";
import type { MilestoneView } from "./milestone.view";
import type { CarrierStatusView, QuantityView } from "./carrier-status.view";
import type { FieldError } from "../domain/checker";
import type { IngestAnswerView, UnmappedStatusView } from "./ingest-answer.view";

/** ISO 8601 date-time with an explicit offset (Z or ±hh:mm), as milestone.validate.ts reads it. */
const ISO_WITH_OFFSET = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}:?\\d{2})$";
/** A flight designator, as milestone.validate.ts reads it. */
const FLIGHT = "^[A-Z0-9]{2}[A-Z]?\\d{1,4}[A-Z]?$";

/** One milestone as a carrier sends it. `null` is the same as leaving an optional field out. */
const milestoneInput = {
  type: "object",
  required: ["awb", "state"],
  additionalProperties: false,
  properties: {
    eventId: {
      type: ["string", "null"],
      pattern: PATTERNS.notBlank,
      maxLength: 200,
      description: "Your id for the event: a repeat is stored and notified once; shown back as clientEventId",
      examples: ["FSU-2026-11-20-000123"],
    },
    awb: {
      type: "string",
      pattern: PATTERNS.awb,
      description:
        "The AWB: 3-digit prefix and 8-digit serial, as 020-12345675, 02012345675 or 020 12345675 (with AWB_CHECK_DIGIT=enforce, the check digit must be right)",
      examples: ["020-12345675"],
    },
    state: {
      type: "string",
      description: `One status code, in any case: ${STATUS_CODES.join(", ")}`,
      examples: ["DEP"],
    },
    timestamp: {
      type: ["string", "null"],
      pattern: ISO_WITH_OFFSET,
      description: "When it happened, ISO 8601 with offset; default: when received",
      examples: ["2026-11-20T07:30:00Z"],
    },
    toaTimestamp: {
      type: ["string", "null"],
      pattern: ISO_WITH_OFFSET,
      description: "TOA events only: the new time of arrival, ISO 8601 with offset",
    },
    station: {
      type: ["string", "null"],
      pattern: "^[A-Z]{3}$",
      description: "IATA code of the station, upper case",
      examples: ["FRA"],
    },
    flight: { type: ["string", "null"], pattern: FLIGHT, description: "Flight designator", examples: ["LH8160"] },
  },
} as const;

export const ingestBody = {
  description: `One milestone, or an array of 1 to ${MAX_EVENTS_PER_CALL.toLocaleString("en")}`,
  oneOf: [milestoneInput, { type: "array", minItems: 1, maxItems: MAX_EVENTS_PER_CALL, items: milestoneInput }],
  examples: [
    [
      {
        eventId: "FSU-2026-11-20-000123",
        awb: "020-12345675",
        state: "DEP",
        timestamp: "2026-11-20T07:30:00Z",
        station: "FRA",
        flight: "LH8160",
      },
    ],
  ],
} as const;

const ingestResult = objectSchema<IngestResult>({
  properties: {
    eventId: {
      type: "string",
      format: "uuid",
      description: "The gateway's id of the stored event (for a repeat: the one stored first)",
    },
    clientEventId: { type: ["string", "null"], description: "The eventId you sent, or null" },
    duplicate: { type: "boolean" },
    matchedSubscriptions: {
      type: "integer",
      description: "Subscriptions notified, webhook and ONE Record ones (0 for a duplicate)",
    },
  },
});

const unmappedStatus = objectSchema<UnmappedStatusView>({
  description: "A status of a carrier message that is no milestone: recorded in the history, delivered to no one",
  properties: {
    code: { type: "string", description: "The status code as sent (FOH, OCI, or a typo such as DPE)" },
    line: { type: ["integer", "null"], description: "The FSU line" },
    element: { type: ["string", "null"], description: "The XFSU element" },
    text: { type: "string", description: "The line or element as sent" },
    reason: { type: "string", description: "Why it is not a milestone" },
  },
});

export const ingestAnswer = objectSchema<IngestAnswerView>({
  description:
    "Stored: per event, in the order sent (a carrier message: in the order read); the statuses of a carrier message that are no milestone; warnings about what was stored anyway",
  properties: {
    events: { type: "array", items: ingestResult },
    unmapped: { type: "array", items: unmappedStatus, description: "Carrier messages only; [] for JSON" },
    warnings: {
      type: "array",
      description: "A wrong AWB check digit stored under AWB_CHECK_DIGIT=off, per event (field events[i].awb)",
      items: objectSchema<FieldError>({ properties: { field: { type: "string" }, message: { type: "string" } } }),
    },
  },
});

/** A stored milestone, as GET …/events and the live events show it. */
export const milestoneSchema = objectSchema<MilestoneView>({
  $id: "Milestone",
  properties: {
    eventId: { type: "string", format: "uuid" },
    clientEventId: { type: ["string", "null"], description: "The eventId the ingesting caller gave, or null" },
    sequence: { type: "string", pattern: "^[1-9][0-9]*$", description: "Its place in its AWB's stream: 1, 2, 3, …" },
    awb: { type: "string", examples: ["020-12345675"] },
    state: { type: "string", enum: STATUS_CODES },
    timestamp: { type: "string", format: "date-time", description: "When it happened" },
    toaTimestamp: { type: ["string", "null"], format: "date-time" },
    receivedAt: { type: "string", format: "date-time" },
    station: { type: ["string", "null"] },
    flight: { type: ["string", "null"] },
  },
});

const text = { type: ["string", "null"] } as const;

/** A status a carrier message reported, as GET …/carrier-statuses shows it. */
export const carrierStatusSchema = objectSchema<CarrierStatusView>({
  $id: "CarrierStatus",
  properties: {
    id: { type: "string", format: "uuid" },
    awb: { type: "string", examples: ["020-12345675"] },
    code: { type: "string", description: "The status code as the message gives it (RCS, FOH, OCI, …)" },
    mapped: { type: "boolean", description: "A gateway milestone (stored and delivered as one)" },
    milestoneEventId: { ...text, description: "The stored milestone's eventId, when mapped" },
    reason: { ...text, description: "Why it is not a milestone, when not mapped" },
    format: { type: "string", enum: ["FSU", "XFSU"] },
    source: objectSchema<CarrierStatusView["source"]>({
      description: "Where it was read: the FSU line or the XFSU element, and its text",
      properties: {
        line: { type: ["integer", "null"] },
        element: text,
        text: { type: "string" },
      },
    }),
    timestamp: {
      type: ["string", "null"],
      format: "date-time",
      description: "When it happened, when the message said",
    },
    timeBasis: { ...text, description: "utc, local, day or received (docs/INGESTION.md, Times)" },
    station: text,
    flight: text,
    flightDate: { ...text, description: "The flight's day (MAN, DEP: departure; ARR, RCF, TOA: arrival), YYYY-MM-DD" },
    carrier: { ...text, description: "RCT, TFD: the carrier received from or transferred to" },
    discrepancy: { ...text, description: "DIS: the discrepancy code" },
    toaTimestamp: { type: ["string", "null"], format: "date-time" },
    quantity: {
      ...objectSchema<QuantityView>({
        properties: {
          shipment: { type: "string", description: "T total, P part, D divided, S split" },
          pieces: { type: ["integer", "null"] },
          weight: { type: ["number", "null"] },
          weightUnit: { ...text, description: "K kilograms, L pounds" },
          totalPieces: { type: ["integer", "null"] },
        },
      }),
      type: ["object", "null"],
    },
    receivedAt: { type: "string", format: "date-time" },
  },
});

export const historyQuery = {
  type: "object",
  required: ["awb"],
  properties: { awb: { type: "string", pattern: PATTERNS.awb, examples: ["020-12345675"] } },
} as const;
