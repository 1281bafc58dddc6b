import { param, sql, statement } from "../../db/sql-statement";

/**
 * An AWB's Waybill and Shipment skeletons, written when the gateway knows the AWB (a milestone in
 * status_event or a status in carrier_status) and they do not exist yet; each with its revision 1.
 * Safe to run from any number of instances at once: a skeleton another wrote first is kept. Answers
 * whether the AWB is known and the ids written now (sorted), whose creation the caller notifies.
 */
export const ensureAwbObjects = statement<
  {
    awb: string;
    createdBy: string;
    waybillId: string;
    waybillType: string;
    waybillBody: string;
    shipmentId: string;
    shipmentType: string;
    shipmentBody: string;
  },
  { known: boolean; created: string[] }
>(
  "onerecord/awb-objects-ensure",
  sql`WITH known AS (
        SELECT EXISTS (SELECT 1 FROM status_event WHERE awb = ${param("awb")})
            OR EXISTS (SELECT 1 FROM carrier_status WHERE awb = ${param("awb")}) AS known
      ), created AS (
        INSERT INTO logistics_object (id, type, types, body, revision, awb, created_by)
        SELECT v.id, v.type, ARRAY[v.type], v.body::jsonb, 1, ${param("awb")}, ${param("createdBy")}
        FROM (VALUES (${param("waybillId")}, ${param("waybillType")}, ${param("waybillBody")}),
                     (${param("shipmentId")}, ${param("shipmentType")}, ${param("shipmentBody")})) AS v(id, type, body),
             known
        WHERE known.known
        ON CONFLICT (id) DO NOTHING
        RETURNING id, body, types, last_modified
      ), first_revisions AS (
        INSERT INTO logistics_object_revision (object_id, revision, body, types, modified_at)
        SELECT id, 1, body, types, last_modified FROM created
      )
      SELECT known, ARRAY(SELECT id FROM created ORDER BY id) AS created FROM known`,
);
