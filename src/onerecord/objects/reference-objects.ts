import { flightOfTransportMovementId } from "../events/event-mapping";
import { CARGO } from "../jsonld-context";
import type { NodeObject } from "../jsonld-tree";
import { locationIdOf, shipmentIdOf, waybillIdOf } from "../uris";

/**
 * The bodies of the objects the gateway holds for itself (expanded, with local ids): an AWB's Waybill
 * and Shipment as skeletons (completed when the carrier posts them), a station's Location, the
 * carrier's Organization and each API client's, a flight's TransportMovement.
 */

export const WAYBILL = `${CARGO}Waybill`;
export const SHIPMENT = `${CARGO}Shipment`;
export const LOCATION = `${CARGO}Location`;
export const ORGANIZATION = `${CARGO}Organization`;
export const TRANSPORT_MOVEMENT = `${CARGO}TransportMovement`;
export const SKELETON_INDICATOR = `${CARGO}skeletonIndicator`;
export const WAYBILL_PREFIX = `${CARGO}waybillPrefix`;
export const WAYBILL_NUMBER = `${CARGO}waybillNumber`;
export const WAYBILL_TYPE = `${CARGO}waybillType`;
export const WAYBILL_SHIPMENT = `${CARGO}shipment`;
export const SHIPMENT_WAYBILL = `${CARGO}waybill`;
export const MASTER = `${CARGO}MASTER`;
export const HOUSE = `${CARGO}HOUSE`;

const text = (value: string) => [{ "@value": value }];
const link = (id: string) => [{ "@id": id }];

/** An AWB's Waybill before the carrier describes it: MASTER, prefix and serial, its Shipment. */
export function waybillSkeleton(awb: string): NodeObject {
  const [prefix, serial] = awb.split("-") as [string, string];
  return {
    "@id": waybillIdOf(awb),
    "@type": [WAYBILL],
    [WAYBILL_TYPE]: link(MASTER),
    [WAYBILL_PREFIX]: text(prefix),
    [WAYBILL_NUMBER]: text(serial),
    [WAYBILL_SHIPMENT]: link(shipmentIdOf(awb)),
    [SKELETON_INDICATOR]: [{ "@value": true }],
  };
}

/** An AWB's Shipment before the carrier describes it: the events' object, linked to its Waybill. */
export function shipmentSkeleton(awb: string): NodeObject {
  return {
    "@id": shipmentIdOf(awb),
    "@type": [SHIPMENT],
    [SHIPMENT_WAYBILL]: link(waybillIdOf(awb)),
    [SKELETON_INDICATOR]: [{ "@value": true }],
  };
}

export function isSkeleton(body: NodeObject): boolean {
  const values = body[SKELETON_INDICATOR];
  return Array.isArray(values) && values.some((v) => (v as { "@value"?: unknown })["@value"] === true);
}

/** A station as a Location: its IATA code (a location code of the IATA list) and its name. */
export function stationLocation(station: { code: string; name: string }): NodeObject {
  const id = locationIdOf(station.code);
  return {
    "@id": id,
    "@type": [LOCATION],
    [`${CARGO}locationCodes`]: [
      {
        "@id": `internal:${id}-iata-code`,
        "@type": [`${CARGO}CodeListElement`],
        [`${CARGO}code`]: text(station.code),
        [`${CARGO}codeListName`]: text("IATA location identifier"),
      },
    ],
    [`${CARGO}locationName`]: text(station.name),
    [`${CARGO}locationType`]: text("Airport"),
  };
}

/** The carrier: the data holder of this server. */
export function carrierOrganization(id: string, name: string): NodeObject {
  return { "@id": id, "@type": [ORGANIZATION], [`${CARGO}name`]: text(name) };
}

/**
 * An API client's Organization, the one its action requests name: its name as the carrier registered
 * it. A plain Organization, as the carrier's: the gateway does not know whether a client is a Company,
 * a PublicAuthority or another carrier.
 */
export function clientOrganization(id: string, name: string): NodeObject {
  return { "@id": id, "@type": [ORGANIZATION], [`${CARGO}name`]: text(name) };
}

/**
 * The TransportMovement a milestone's transportMovementReference names ("transport-movement-lh400-
 * 2026-10-16"): what its id says, the flight as transportIdentifier. The ontology has no property for
 * a day without a time (movementTimestamp is an instant), so the flight's day is in the id only.
 * Undefined for an id that is not a flight designator and a calendar day.
 */
export function transportMovement(id: string): NodeObject | undefined {
  const flight = flightOfTransportMovementId(id);
  const day = id.slice(-10);
  const midnight = new Date(`${day}T00:00:00Z`);
  if (flight === undefined || Number.isNaN(midnight.getTime()) || midnight.toISOString().slice(0, 10) !== day)
    return undefined;
  return { "@id": id, "@type": [TRANSPORT_MOVEMENT], [`${CARGO}transportIdentifier`]: text(flight) };
}
