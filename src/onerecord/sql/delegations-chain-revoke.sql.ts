import { param, sql, statement } from "../../db/sql-statement";
import { DELEGATION_COLUMNS, type AccessDelegationRow } from "./delegation-columns";

/**
 * Revokes the accepted delegations among `ids` that no longer hold any grant: their access went with
 * a grant withdrawn up their trust chain. One that still grants something stays accepted. Run after
 * the grants are deleted, in the same transaction.
 */
export const revokeChainedDelegations = statement<
  { ids: string[]; revokedBy: string; reason: string },
  AccessDelegationRow
>(
  "onerecord/delegations-chain-revoke",
  sql`UPDATE onerecord_access_delegation d
      SET status = 'REQUEST_REVOKED', decided_at = now(), decided_by = ${param("revokedBy")}, reason = ${param("reason")}
      WHERE d.id = ANY(${param("ids")}::uuid[]) AND d.status = 'REQUEST_ACCEPTED'
        AND NOT EXISTS (SELECT 1 FROM logistics_object_grant g WHERE g.delegation_id = d.id)
      RETURNING ${DELEGATION_COLUMNS}`,
);
