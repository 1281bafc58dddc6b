import { sqlText } from "../../db/sql-statement";

/** An AccessDelegationRequest's row (onerecord_access_delegation) as the delegation statements answer it. */
export interface AccessDelegationRow {
  id: string;
  /** REQUEST_ACCEPTED, REQUEST_REJECTED or REQUEST_REVOKED (decided on arrival: never pending). */
  status: string;
  /** The requester's Organization id (organizations.ts). */
  requested_by: string;
  requested_at: Date;
  /** When it was decided, or when it was revoked. */
  decided_at: Date | null;
  /** Who decided (the carrier's Organization: the server's policy), or who revoked it. */
  decided_by: string | null;
  /** Why it was refused (with error_status), or revoked along a trust chain (without). */
  reason: string | null;
  error_status: number | null;
  /** The api:AccessDelegation, expanded, this server's objects and Organizations by local id. */
  delegation: Record<string, unknown>;
  /** The logistics objects' local ids. */
  objects: string[];
  /** The delegate's Organization id. */
  organizations: string[];
  /** api:Permission local names. */
  permissions: string[];
  expires_at: Date | null;
  notify_status_change: boolean;
}

export const DELEGATION_COLUMNS = sqlText(
  "id::text AS id, status, requested_by, requested_at, decided_at, decided_by, reason, error_status, delegation, " +
    "objects, organizations, permissions, expires_at, notify_status_change",
);
