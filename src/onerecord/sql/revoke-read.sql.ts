import { param, sql, statement } from "../../db/sql-statement";
import { withdrawnGrants } from "./grant-chain";

/**
 * Withdraws an Organization's read access to a logistics object when `revokedBy` created it, with what
 * that Organization passed on through access delegations (grant-chain.ts). Answers the object's creator
 * (no row when there is no such object, as grant-read) and the delegations whose grants went with it.
 */
export const revokeRead = statement<
  { objectId: string; organizationId: string; revokedBy: string },
  { created_by: string; delegation_ids: string[] }
>(
  "onerecord/revoke-read",
  sql`WITH RECURSIVE target AS (SELECT id, created_by FROM logistics_object WHERE id = ${param("objectId")}),
      ${withdrawnGrants(
        sql`SELECT g.object_id, g.organization_id FROM logistics_object_grant g JOIN target t ON t.id = g.object_id
            WHERE g.organization_id = ${param("organizationId")} AND t.created_by = ${param("revokedBy")}`,
      )}
      SELECT created_by,
        ARRAY(SELECT DISTINCT delegation_id FROM withdrawn WHERE delegation_id IS NOT NULL ORDER BY delegation_id)
          AS delegation_ids
      FROM target`,
);
