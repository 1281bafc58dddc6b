import { param, sql } from "../../db/sql-statement";

/**
 * An object's logistics events as one relation (a part of the events statements, not a statement):
 * for an AWB's Shipment (`awb` given) its milestones (status_event, with what their FSU or XFSU status
 * said: carrier_status, keyed by the milestone's dedupe key without its "id:" prefix), the carrier
 * statuses that are no milestones but have a StatusCode member (`statusCodes`), and the events posted
 * through ONE Record (logistics_event). A milestone posted through ONE Record keeps its posted body in
 * logistics_event under the milestone's id: it is listed once, as the milestone, with that body.
 *
 * `code_iri` is the eventCode's IRI the filters compare (null for a DIS whose discrepancy is unknown),
 * `event_date` the eventDate (a TOA's new time of arrival), `creation_date` when it was stored.
 */
export const LOGISTICS_EVENT_ROWS = sql`
  SELECT 'milestone' AS kind, e.id::text AS id, e.state AS code,
         CASE WHEN e.state = 'TOA' THEN coalesce(e.toa_timestamp, e.occurred_at) ELSE e.occurred_at END AS event_date,
         e.received_at AS creation_date,
         CASE WHEN p.id IS NOT NULL THEN p.event_code
              WHEN e.state = 'TOA' THEN ${param("statusCodePrefix")} || 'ARR'
              WHEN e.state = 'DIS' THEN CASE WHEN 'DIS_' || c.discrepancy = ANY(${param("statusCodes")}::text[])
                                             THEN ${param("statusCodePrefix")} || 'DIS_' || c.discrepancy END
              ELSE ${param("statusCodePrefix")} || e.state END AS code_iri,
         e.occurred_at, e.toa_timestamp, e.station, e.flight,
         c.flight_date, c.discrepancy, c.shipment, c.pieces, c.weight, c.weight_unit, p.body
  FROM status_event e
    LEFT JOIN carrier_status c ON c.mapped AND left(e.dedupe_key, 3) = 'id:' AND c.status_key = substr(e.dedupe_key, 4)
                                  AND c.awb = e.awb
    LEFT JOIN logistics_event p ON p.object_id = ${param("objectId")} AND p.id = e.id
  WHERE e.awb = ${param("awb")}
  UNION ALL
  SELECT 'status', c.id::text, c.code, coalesce(c.occurred_at, c.received_at), c.received_at,
         ${param("statusCodePrefix")} || c.code,
         c.occurred_at, c.toa_timestamp, c.station, c.flight,
         c.flight_date, c.discrepancy, c.shipment, c.pieces, c.weight, c.weight_unit, NULL::jsonb
  FROM carrier_status c
  WHERE c.awb = ${param("awb")} AND NOT c.mapped AND c.code = ANY(${param("statusCodes")}::text[])
  UNION ALL
  SELECT 'posted', p.id::text, NULL, p.event_date, p.creation_date, p.event_code,
         NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, p.body
  FROM logistics_event p
  WHERE p.object_id = ${param("objectId")} AND NOT EXISTS (SELECT 1 FROM status_event e WHERE e.id = p.id)`;

/** What the relation's parameters are: whose events, and the StatusCode list (its IRIs' prefix, its labels). */
export type LogisticsEventRowsParams = {
  /** The object's local id ("shipment-020-12345675", a UUID). */
  objectId: string;
  /** The AWB when the object is an AWB's Shipment; null for any other object (no milestones). */
  awb: string | null;
  statusCodePrefix: string;
  statusCodes: string[];
};

/** One event as the relation answers it. */
export interface LogisticsEventRow {
  kind: "milestone" | "status" | "posted";
  id: string;
  /** A milestone's state, a carrier status's code; null for a posted event. */
  code: string | null;
  event_date: Date;
  creation_date: Date;
  occurred_at: Date | null;
  toa_timestamp: Date | null;
  station: string | null;
  flight: string | null;
  flight_date: string | null;
  discrepancy: string | null;
  shipment: string | null;
  pieces: number | null;
  weight: number | null;
  weight_unit: string | null;
  /** A posted event's body (compacted, without @context, local ids for this server's URIs). */
  body: Record<string, unknown> | null;
}

/** The relation's columns, for the statements that select them by name. */
export const LOGISTICS_EVENT_COLUMNS = sql`kind, id, code, event_date, creation_date, occurred_at, toa_timestamp,
  station, flight, flight_date, discrepancy, shipment, pieces, weight, weight_unit, body`;
