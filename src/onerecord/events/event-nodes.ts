import { isLocalId, mapIds } from "../jsonld-tree";
import type { LogisticsEventRow } from "../sql/logistics-event-rows";
import { ONE_RECORD_CONTEXT } from "../jsonld-context";
import { carrierStatusEvent, dateTime, type EventNode, type EventUris, milestoneEvent } from "./event-mapping";

/**
 * The events statement's rows as the JSON-LD nodes answers carry, and the Collection of a list. Pure:
 * rows and URIs in, compacted JSON-LD out.
 */

/** An event row as its node: a milestone or carrier status mapped, a posted event as it was posted. */
export function eventNodeOf(row: LogisticsEventRow, objectId: string, awb: string | null, uris: EventUris): EventNode {
  if (row.body !== null) return postedEventNode(row, objectId, uris);
  const carrier = {
    flightDate: row.flight_date,
    discrepancy: row.discrepancy,
    shipment: row.shipment,
    pieces: row.pieces,
    weight: row.weight,
    weightUnit: row.weight_unit,
  };
  if (row.kind === "milestone")
    return milestoneEvent(
      {
        id: row.id,
        awb: awb!,
        state: row.code!,
        occurredAt: row.occurred_at!,
        receivedAt: row.creation_date,
        toaTimestamp: row.toa_timestamp,
        station: row.station,
        flight: row.flight,
        carrier,
      },
      uris,
    );
  // The statement lists only carrier statuses whose code StatusCode has.
  return carrierStatusEvent(
    {
      id: row.id,
      awb: awb!,
      code: row.code!,
      occurredAt: row.occurred_at,
      receivedAt: row.creation_date,
      station: row.station,
      flight: row.flight,
      carrier,
    },
    uris,
  )!;
}

/** A posted event: its stored body (this server's objects by local id) with its URI, its object and when it was stored. */
function postedEventNode(row: LogisticsEventRow, objectId: string, uris: EventUris): EventNode {
  const body = mapIds(row.body!, (id) => (isLocalId(id) ? uris.objectUri(id) : undefined));
  return {
    "@id": uris.eventUri(objectId, row.id),
    ...body,
    "cargo:eventFor": { "@id": uris.objectUri(objectId) },
    "cargo:creationDate": dateTime(row.creation_date),
  };
}

/**
 * The api:Collection of a list (the specification's Logistics Events page): its @id the list's URL,
 * api:hasTotalItems what the filters match, and api:hasItem absent for none, the event itself for one,
 * an array for more.
 */
export function eventCollection(listUri: string, total: number, items: readonly EventNode[]): EventNode {
  const collection: EventNode = {
    "@context": ONE_RECORD_CONTEXT,
    "@id": listUri,
    "@type": "api:Collection",
    "api:hasTotalItems": total,
  };
  if (items.length === 1) collection["api:hasItem"] = items[0];
  else if (items.length > 1) collection["api:hasItem"] = items;
  return collection;
}
