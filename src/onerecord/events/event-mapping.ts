import { isFlightDesignator } from "../../domain/flight";
import { CARRIER_ORGANIZATION_ID } from "../identity/organizations";
import { ONE_RECORD_CONTEXT, XSD } from "../jsonld-context";
import { canonicalLiteral } from "../xsd-canonical";
import { locationIdOf, shipmentIdOf } from "../uris";
import {
  eventNameOf,
  isStatusCodeLabel,
  milestoneCodeLabel,
  milestoneTimeType,
  statusCodeIri,
  weightUnitIri,
} from "./status-codes";

/**
 * An AWB's stored milestones and carrier statuses as its Shipment's logistics events (the ONE Record
 * orchestration for XFSU 1.2: a StatusUpdateEvent on the Shipment), written directly in the compacted
 * form answers carry (docs/ONE-RECORD.md "Logistics events" has the table, field by field). Pure: the
 * rows in, the JSON-LD node out.
 */

/** A JSON-LD node in compacted form, without its @context (a Collection's items carry none). */
export type EventNode = Record<string, unknown>;

/** What an FSU or XFSU status said beyond the milestone (carrier_status). */
export interface CarrierFacts {
  /** The flight's day as the message gives it, YYYY-MM-DD. */
  readonly flightDate: string | null;
  /** DIS: the discrepancy code (MSCA, …). */
  readonly discrepancy: string | null;
  /** T: the total consignment; P: part of it; D, S: divided or split. */
  readonly shipment: string | null;
  readonly pieces: number | null;
  readonly weight: number | null;
  /** K or L. */
  readonly weightUnit: string | null;
}

/** A stored milestone (status_event), with its carrier status when an FSU or XFSU reported it. */
export interface MilestoneFacts {
  readonly id: string;
  readonly awb: string;
  readonly state: string;
  readonly occurredAt: Date;
  readonly receivedAt: Date;
  readonly toaTimestamp: Date | null;
  readonly station: string | null;
  readonly flight: string | null;
  readonly carrier: CarrierFacts | null;
}

/** A carrier status that is no milestone (FOH, BKD, OCI, …): an event when StatusCode has its code. */
export interface CarrierStatusFacts {
  readonly id: string;
  readonly awb: string;
  readonly code: string;
  /** Null when the message gave no time: the event is then dated when it was received. */
  readonly occurredAt: Date | null;
  readonly receivedAt: Date;
  readonly station: string | null;
  readonly flight: string | null;
  readonly carrier: CarrierFacts;
}

/** The URIs the mapping writes. */
export interface EventUris {
  objectUri(id: string): string;
  eventUri(objectId: string, eventId: string): string;
}

const STATUS_UPDATE_EVENT_TYPES = ["cargo:StatusUpdateEvent", "cargo:LogisticsEvent"];

/** The event a milestone is, with its `eventDate` (what occurred-after/before and sorting compare). */
export function milestoneEvent(m: MilestoneFacts, uris: EventUris): EventNode {
  const discrepancy = m.carrier?.discrepancy ?? null;
  const label = milestoneCodeLabel(m.state, discrepancy);
  return statusUpdateEvent({
    id: m.id,
    awb: m.awb,
    codeLabel: label,
    name: eventNameOf(m.state, label === undefined ? null : discrepancy),
    eventDate: milestoneEventDate(m.state, m.occurredAt, m.toaTimestamp),
    creationDate: m.receivedAt,
    timeType: milestoneTimeType(m.state),
    station: m.station,
    flight: m.flight,
    flightDate: m.carrier?.flightDate ?? null,
    dayOfEvent: m.occurredAt,
    carrier: m.carrier,
    uris,
  });
}

/**
 * When a milestone's event occurred: its time, but a TOA's is the new time of arrival it announces
 * (an expected time), or, when it gave none, when it was announced.
 */
export function milestoneEventDate(state: string, occurredAt: Date, toaTimestamp: Date | null): Date {
  return state === "TOA" ? (toaTimestamp ?? occurredAt) : occurredAt;
}

/** The event a carrier status is, or undefined when StatusCode has no member for its code (SSR, ULD, unknown codes). */
export function carrierStatusEvent(s: CarrierStatusFacts, uris: EventUris): EventNode | undefined {
  if (!isStatusCodeLabel(s.code)) return undefined;
  const eventDate = s.occurredAt ?? s.receivedAt;
  return statusUpdateEvent({
    id: s.id,
    awb: s.awb,
    codeLabel: s.code,
    name: eventNameOf(s.code, null),
    eventDate,
    creationDate: s.receivedAt,
    timeType: "ACTUAL",
    station: s.station,
    flight: s.flight,
    flightDate: s.carrier.flightDate,
    dayOfEvent: eventDate,
    carrier: s.carrier,
    uris,
  });
}

function statusUpdateEvent(e: {
  id: string;
  awb: string;
  codeLabel: string | undefined;
  name: string;
  eventDate: Date;
  creationDate: Date;
  timeType: string;
  station: string | null;
  flight: string | null;
  /** The flight's day as the message gave it; else the UTC day of `dayOfEvent`. */
  flightDate: string | null;
  dayOfEvent: Date;
  carrier: CarrierFacts | null;
  uris: EventUris;
}): EventNode {
  const shipmentId = shipmentIdOf(e.awb);
  const { uris, carrier } = e;
  const node: EventNode = {
    "@id": uris.eventUri(shipmentId, e.id),
    "@type": STATUS_UPDATE_EVENT_TYPES,
  };
  if (e.codeLabel !== undefined) node["cargo:eventCode"] = { "@id": statusCodeIri(e.codeLabel) };
  node["cargo:eventName"] = e.name;
  node["cargo:eventDate"] = dateTime(e.eventDate);
  node["cargo:creationDate"] = dateTime(e.creationDate);
  node["cargo:eventTimeType"] = { "@id": `cargo:${e.timeType}` };
  node["cargo:eventFor"] = { "@id": uris.objectUri(shipmentId) };
  if (e.station !== null) node["cargo:eventLocation"] = { "@id": uris.objectUri(locationIdOf(e.station)) };
  node["cargo:recordingOrganization"] = { "@id": uris.objectUri(CARRIER_ORGANIZATION_ID) };
  if (carrier?.shipment != null) node["cargo:partialEventIndicator"] = carrier.shipment !== "T";
  if (carrier?.pieces != null) node["cargo:recordedPieceCount"] = carrier.pieces;
  const unit = weightUnitIri(carrier?.weightUnit ?? null);
  if (carrier?.weight != null && unit !== undefined)
    node["cargo:recordedWeight"] = {
      "@type": "cargo:Value",
      "cargo:numericalValue": { "@type": "xsd:double", "@value": carrier.weight },
      "cargo:unit": { "@id": unit },
    };
  if (e.flight !== null)
    node["cargo:transportMovementReference"] = {
      "@id": uris.objectUri(transportMovementIdOf(e.flight, e.flightDate ?? isoDay(e.dayOfEvent))),
    };
  return node;
}

/**
 * The id of a flight's TransportMovement: "transport-movement-lh400-2026-10-16", by the flight and its
 * day as the status gives it (the day in the message, else the event's UTC day).
 */
export function transportMovementIdOf(flight: string, day: string): string {
  return `transport-movement-${flight.toLowerCase()}-${day}`;
}

/** The flight of a TransportMovement id, upper-case ("LH400"); undefined for any other id. */
export function flightOfTransportMovementId(id: string): string | undefined {
  const flight = /^transport-movement-([a-z0-9]+)-\d{4}-\d{2}-\d{2}$/.exec(id)?.[1]?.toUpperCase();
  return flight !== undefined && isFlightDesignator(flight) ? flight : undefined;
}

/** xsd:dateTime, as the specification's examples write it, in its canonical form (no `.000`). */
export function dateTime(at: Date): { "@type": "xsd:dateTime"; "@value": string } {
  return { "@type": "xsd:dateTime", "@value": canonicalLiteral(`${XSD}dateTime`, at.toISOString()) };
}

function isoDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** A node answered on its own: with the inline context. */
export function withContext(node: EventNode): EventNode {
  return { "@context": ONE_RECORD_CONTEXT, ...node };
}
