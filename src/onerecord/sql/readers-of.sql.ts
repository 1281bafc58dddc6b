import { param, sql, sqlText, statement } from "../../db/sql-statement";

/**
 * Whether the grant row `g` grants anything now. It does not once its `expires_at` has passed (an
 * access delegation's api:expiresAt), nor once the API key whose scope it was made on
 * (`granted_with_key`) is revoked or deleted: a grant lasts no longer than the access it was made on.
 * Every query that asks who may read an object goes through this condition (readers-of, object-read,
 * the delegations' statements, the subscriptions' matching).
 */
export const GRANT_IS_ACTIVE = sqlText(
  "((g.expires_at IS NULL OR g.expires_at > now()) AND (g.granted_with_key IS NULL OR EXISTS " +
    "(SELECT 1 FROM api_key k WHERE k.id = g.granted_with_key AND k.revoked_at IS NULL)))",
);

/**
 * The Organizations an object's active grants name, in order: `objectId` is the SQL naming the object's
 * id. Reads every grant of the object: the access check of one caller asks `activeGrantOf` instead.
 */
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

/**
 * `readers` and `delegates` as `activeReadersOf` and `activeDelegatesOf` answer them, but of the
 * Organization `reader` only (none, or it): one probe of the grants' primary key, however many
 * Organizations the object is granted to.
 */
export function activeGrantOf(objectId: string) {
  const grant = sql<"reader">`FROM logistics_object_grant g
      WHERE g.object_id = ${sqlText(objectId)} AND g.organization_id = ${param("reader")} AND ${GRANT_IS_ACTIVE}`;
  return {
    readers: sql<"reader">`ARRAY(SELECT g.organization_id ${grant})`,
    delegates: sql<"reader">`ARRAY(SELECT g.organization_id ${grant} AND g.delegation_id IS NOT NULL)`,
  };
}

/** The Organizations granted read access to each of the objects now (access-policy.ts ObjectMeta.readers). */
export const readersOf = statement<{ objectIds: string[] }, { object_id: string; organization_id: string }>(
  "onerecord/readers-of",
  sql`SELECT g.object_id, g.organization_id FROM logistics_object_grant g
      WHERE g.object_id = ANY(${param("objectIds")}::text[]) AND ${GRANT_IS_ACTIVE}
      ORDER BY g.object_id, g.organization_id`,
);
