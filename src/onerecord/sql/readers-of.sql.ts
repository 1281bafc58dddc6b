import { param, sql, sqlText, statement } from "../../db/sql-statement";

/**
 * Whether the grant row `g` grants anything now: a grant whose `expires_at` has passed (an access
 * delegation's api:expiresAt) grants nothing. Every query that asks who may read an object goes
 * through this condition (readers-of, object-read, the delegations' statements).
 */
export const GRANT_IS_ACTIVE = sqlText("(g.expires_at IS NULL OR g.expires_at > now())");

/** The Organizations an object's active grants name, in order: `objectId` is the SQL naming the object's id. */
export function activeReadersOf(objectId: string) {
  return sql`ARRAY(SELECT g.organization_id FROM logistics_object_grant g
                   WHERE g.object_id = ${sqlText(objectId)} AND ${GRANT_IS_ACTIVE} ORDER BY g.organization_id)`;
}

/** Those of them whose grant an access delegation made: they read, and do no more (access-policy.ts). */
export function activeDelegatesOf(objectId: string) {
  return sql`ARRAY(SELECT g.organization_id FROM logistics_object_grant g
                   WHERE g.object_id = ${sqlText(objectId)} AND ${GRANT_IS_ACTIVE} AND g.delegation_id IS NOT NULL
                   ORDER BY g.organization_id)`;
}

/** The Organizations granted read access to each of the objects now (access-policy.ts ObjectMeta.readers). */
export const readersOf = statement<{ objectIds: string[] }, { object_id: string; organization_id: string }>(
  "onerecord/readers-of",
  sql`SELECT g.object_id, g.organization_id FROM logistics_object_grant g
      WHERE g.object_id = ANY(${param("objectIds")}::text[]) AND ${GRANT_IS_ACTIVE}
      ORDER BY g.object_id, g.organization_id`,
);
