import { param, sql, statement } from "../../db/sql-statement";

/**
 * Withdraws an Organization's read access to a logistics object when `revokedBy` created it.
 * Answers the object's creator, or no row when there is no such object (as grant-read).
 */
export const revokeRead = statement<
  { objectId: string; organizationId: string; revokedBy: string },
  { created_by: string }
>(
  "onerecord/revoke-read",
  sql`WITH target AS (SELECT id, created_by FROM logistics_object WHERE id = ${param("objectId")}),
      revoked AS (
        DELETE FROM logistics_object_grant g USING target
        WHERE g.object_id = target.id AND g.organization_id = ${param("organizationId")}
          AND target.created_by = ${param("revokedBy")}
      )
      SELECT created_by FROM target`,
);
