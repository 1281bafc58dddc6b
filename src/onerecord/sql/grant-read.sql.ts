import { param, sql, statement } from "../../db/sql-statement";

/**
 * Grants an Organization read access to a logistics object when `grantedBy` created it (again: no
 * change). Answers the object's creator, or no row when there is no such object: the caller tells
 * "granted" (creator = grantedBy) from "not the creator".
 */
export const grantRead = statement<
  { objectId: string; organizationId: string; grantedBy: string },
  { created_by: string }
>(
  "onerecord/grant-read",
  sql`WITH target AS (SELECT id, created_by FROM logistics_object WHERE id = ${param("objectId")}),
      granted AS (
        INSERT INTO logistics_object_grant (object_id, organization_id, granted_by)
        SELECT id, ${param("organizationId")}, ${param("grantedBy")} FROM target
        WHERE created_by = ${param("grantedBy")}
        ON CONFLICT (object_id, organization_id) DO NOTHING
      )
      SELECT created_by FROM target`,
);
