import { param, sql, statement } from "../../db/sql-statement";
import { DELEGATION_COLUMNS, type AccessDelegationRow } from "./delegation-columns";

/** Stores an AccessDelegationRequest as decided on arrival (accepted, or rejected with the reason). */
export const insertDelegation = statement<
  {
    id: string;
    status: string;
    requestedBy: string;
    decidedBy: string;
    reason: string | null;
    errorStatus: number | null;
    delegation: string;
    objects: string[];
    organizations: string[];
    permissions: string[];
    expiresAt: Date | null;
    notifyStatusChange: boolean;
  },
  AccessDelegationRow
>(
  "onerecord/delegation-insert",
  sql`INSERT INTO onerecord_access_delegation
        (id, status, requested_by, requested_at, decided_at, decided_by, reason, error_status, delegation, objects,
         organizations, permissions, expires_at, notify_status_change)
      VALUES (${param("id")}::uuid, ${param("status")}, ${param("requestedBy")}, now(), now(), ${param("decidedBy")},
        ${param("reason")}, ${param("errorStatus")}::int, ${param("delegation")}::jsonb, ${param("objects")}::text[],
        ${param("organizations")}::text[], ${param("permissions")}::text[], ${param("expiresAt")}::timestamptz,
        ${param("notifyStatusChange")})
      RETURNING ${DELEGATION_COLUMNS}`,
);
