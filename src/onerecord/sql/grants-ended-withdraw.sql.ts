import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";

/**
 * Objects on which `grantedBy`'s access delegations made grants that grant nothing any more, at most
 * `limit` of them: the objects to lock before `withdrawEndedGrants`. Found through indexes, at a cost
 * that grows with what ended, not with what the grantor holds: those expired (grantor and expiry), and
 * those made on a revoked API key of its client `clientId` (null for an OIDC agent, which has none).
 */
export const endedGrantObjects = statement<
  { grantedBy: string; clientId: string | null; limit: number },
  { object_id: string }
>(
  "onerecord/grants-ended",
  sql`SELECT object_id FROM (
        SELECT g.object_id FROM logistics_object_grant g
        WHERE g.granted_by = ${param("grantedBy")} AND g.expires_at <= now() AND g.delegation_id IS NOT NULL
        UNION
        SELECT g.object_id FROM api_key k JOIN logistics_object_grant g ON g.granted_with_key = k.id
        WHERE k.client_id = ${param("clientId")}::uuid AND k.revoked_at IS NOT NULL
          AND g.granted_by = ${param("grantedBy")} AND g.delegation_id IS NOT NULL
      ) ended
      ORDER BY object_id LIMIT ${param("limit")}::int`,
);

/**
 * Deletes `grantedBy`'s delegation grants on `objectIds` (locked by the caller) that grant nothing any
 * more (GRANT_IS_ACTIVE). Nothing passed on from them is left granting: what a delegate passes on
 * expires with its own grant, and a grant made on a key's scope cannot be passed on. Answers the
 * delegations they belonged to.
 */
export const withdrawEndedGrants = statement<{ grantedBy: string; objectIds: string[] }, { delegation_id: string }>(
  "onerecord/grants-ended-withdraw",
  sql`DELETE FROM logistics_object_grant g
      WHERE g.granted_by = ${param("grantedBy")} AND g.object_id = ANY(${param("objectIds")}::text[])
        AND g.delegation_id IS NOT NULL AND NOT ${GRANT_IS_ACTIVE}
      RETURNING g.delegation_id::text AS delegation_id`,
);
