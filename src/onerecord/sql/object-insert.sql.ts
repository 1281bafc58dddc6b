import { param, sql, statement } from "../../db/sql-statement";
import { OBJECT_COLUMNS, type ObjectRow } from "./object-columns";

/**
 * A new logistics object at revision 1, and that revision; no row when the id is taken (nothing is
 * written then).
 */
export const insertObject = statement<
  { id: string; type: string; types: string[]; body: string; awb: string | null; createdBy: string },
  ObjectRow
>(
  "onerecord/object-insert",
  sql`WITH created AS (
        INSERT INTO logistics_object (id, type, types, body, revision, awb, created_by)
        VALUES (${param("id")}, ${param("type")}, ${param("types")}::text[], ${param("body")}::jsonb, 1,
                ${param("awb")}, ${param("createdBy")})
        ON CONFLICT (id) DO NOTHING
        RETURNING ${OBJECT_COLUMNS}
      ), first_revision AS (
        INSERT INTO logistics_object_revision (object_id, revision, body, types, modified_at)
        SELECT id, 1, body, types, last_modified FROM created
      )
      SELECT * FROM created`,
);
