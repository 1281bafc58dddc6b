import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";

const ENDED = sql<"grantedBy">`g.granted_by = ${param("grantedBy")} AND g.delegation_id IS NOT NULL AND NOT ${GRANT_IS_ACTIVE}`;

/**
 * Objects on which `grantedBy`'s access delegations made grants that grant nothing any more (expired,
 * or made on an API key since revoked), at most `limit` of them, through the grantor-and-object index:
 * the objects to lock before `withdrawEndedGrants`.
 */
export const endedGrantObjects = statement<{ grantedBy: string; limit: number }, { object_id: string }>(
  "onerecord/grants-ended",
  sql`SELECT DISTINCT g.object_id FROM logistics_object_grant g WHERE ${ENDED}
      ORDER BY g.object_id LIMIT ${param("limit")}::int`,
);

/**
 * Deletes those grants on `objectIds` (locked by the caller). Nothing passed on from them is left
 * granting: what a delegate passes on expires with its own grant, and a grant made on a key's scope
 * cannot be passed on. Answers the delegations they belonged to.
 */
export const withdrawEndedGrants = statement<{ grantedBy: string; objectIds: string[] }, { delegation_id: string }>(
  "onerecord/grants-ended-withdraw",
  sql`DELETE FROM logistics_object_grant g WHERE g.object_id = ANY(${param("objectIds")}::text[]) AND ${ENDED}
      RETURNING g.delegation_id::text AS delegation_id`,
);
