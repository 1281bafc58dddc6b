import { param, sql, statement } from "../../db/sql-statement";

/**
 * AWBs' Waybills and Shipments (one row per element of the arrays), each with its revision 1, for
 * those not written yet; answers the ones written now. Ingestion runs it for the AWBs whose first
 * milestone it stores: an AWB's objects are written once, whoever writes them first (a read, a
 * posted Waybill, another instance), and only the writer sees them in its answer.
 */
export const insertAwbObjects = statement<
  { ids: string[]; types: string[]; bodies: string[]; awbs: string[]; createdBy: string },
  { id: string; type: string; awb: string }
>(
  "onerecord/awb-objects-insert",
  sql`WITH created AS (
        INSERT INTO logistics_object (id, type, types, body, revision, awb, created_by)
        SELECT v.id, v.type, ARRAY[v.type], v.body::jsonb, 1, v.awb, ${param("createdBy")}
        FROM unnest(${param("ids")}::text[], ${param("types")}::text[], ${param("bodies")}::text[],
                    ${param("awbs")}::text[]) WITH ORDINALITY AS v(id, type, body, awb, n)
        ORDER BY v.n
        ON CONFLICT (id) DO NOTHING
        RETURNING id, type, awb, body, types, last_modified
      ), first_revisions AS (
        INSERT INTO logistics_object_revision (object_id, revision, body, types, modified_at)
        SELECT id, 1, body, types, last_modified FROM created
      )
      SELECT id, type, awb FROM created ORDER BY id`,
);
