import { sqlText } from "../../db/sql-statement";

/** An action request's row as the action-request statements answer it. */
export interface ActionRequestRow {
  id: string;
  kind: string;
  object_id: string;
  status: string;
  /** The api:Change, expanded, with local ids. */
  request: Record<string, unknown>;
  requested_by: string;
  requested_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  reason: string | null;
  error_status: number | null;
  revision: number;
}

export const ACTION_REQUEST_COLUMNS = sqlText(
  "id::text AS id, kind, object_id, status, request, requested_by, requested_at, decided_at, decided_by, reason, error_status, revision",
);
