import { param, sql, statement } from "../../db/sql-statement";
import { DELEGATION_COLUMNS, type AccessDelegationRow } from "./delegation-columns";

/**
 * Revokes an AccessDelegationRequest that is pending or accepted (the states the specification lets
 * one be revoked from). No row when it is in neither: two revocations, from any instances, cannot both
 * be taken.
 */
export const revokeDelegation = statement<{ id: string; revokedBy: string }, AccessDelegationRow>(
  "onerecord/delegation-revoke",
  sql`UPDATE onerecord_access_delegation
      SET status = 'REQUEST_REVOKED', decided_at = now(), decided_by = ${param("revokedBy")}
      WHERE id = ${param("id")}::uuid AND status IN ('REQUEST_PENDING', 'REQUEST_ACCEPTED')
      RETURNING ${DELEGATION_COLUMNS}`,
);
