import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";

/**
 * The read grants of an accepted access delegation: one per object for the delegate, made on the
 * requester's word (granted_by), expiring with the delegation and never after the requester's own
 * grant to the object (a delegate cannot outlast the access it was passed). None to the object's
 * creator nor to the requester itself, who read it already. An active grant the delegate holds stays
 * as it is (its delegation, its expiry); one that grants nothing any more (expired, or its key revoked)
 * is replaced. Answers the objects granted.
 *
 * The objects of `scopeObjectIds` the requester reads by a scope only: their grants are made on that
 * access, so they end with it — with the API key `grantedWithKey` (GRANT_IS_ACTIVE), or at
 * `scopeExpiresAt` (an OIDC token's expiry). `mayPassOn`: the delegate may delegate them further.
 */
export const grantDelegation = statement<
  {
    delegationId: string;
    objectIds: string[];
    organizationId: string;
    grantedBy: string;
    expiresAt: Date | null;
    mayPassOn: boolean;
    scopeObjectIds: string[];
    grantedWithKey: string | null;
    scopeExpiresAt: Date | null;
  },
  { object_id: string }
>(
  "onerecord/delegation-grant",
  sql`INSERT INTO logistics_object_grant AS g
        (object_id, organization_id, granted_by, delegation_id, expires_at, may_pass_on, granted_with_key)
      SELECT o.id, ${param("organizationId")}, ${param("grantedBy")}, ${param("delegationId")}::uuid,
        LEAST(${param("expiresAt")}::timestamptz,
          CASE WHEN o.id = ANY(${param("scopeObjectIds")}::text[]) THEN ${param("scopeExpiresAt")}::timestamptz END,
          (SELECT g.expires_at FROM logistics_object_grant g
           WHERE g.object_id = o.id AND g.organization_id = ${param("grantedBy")} AND ${GRANT_IS_ACTIVE})),
        ${param("mayPassOn")},
        CASE WHEN o.id = ANY(${param("scopeObjectIds")}::text[]) THEN ${param("grantedWithKey")}::uuid END
      FROM logistics_object o
      WHERE o.id = ANY(${param("objectIds")}::text[]) AND o.created_by <> ${param("organizationId")}
        AND ${param("organizationId")}::text <> ${param("grantedBy")}::text
      ON CONFLICT (object_id, organization_id) DO UPDATE
        SET granted_by = excluded.granted_by, granted_at = now(), delegation_id = excluded.delegation_id,
            expires_at = excluded.expires_at, may_pass_on = excluded.may_pass_on,
            granted_with_key = excluded.granted_with_key
        WHERE NOT ${GRANT_IS_ACTIVE}
      RETURNING object_id`,
);
