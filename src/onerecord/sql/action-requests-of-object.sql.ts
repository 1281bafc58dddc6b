import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";

/** The most action requests an audit trail lists (the latest ones). */
export const MAX_AUDIT_TRAIL_REQUESTS = 1_000;

/**
 * An object's action requests for its audit trail, oldest first: those last updated (decided, or else
 * requested) within the period, in the statuses asked (null: every one).
 */
export const actionRequestsOfObject = statement<
  { objectId: string; from: Date | null; to: Date | null; statuses: string[] | null },
  ActionRequestRow
>(
  "onerecord/action-requests-of-object",
  sql`SELECT * FROM (
        SELECT ${ACTION_REQUEST_COLUMNS} FROM action_request
        WHERE object_id = ${param("objectId")}
          AND (${param("from")}::timestamptz IS NULL OR coalesce(decided_at, requested_at) >= ${param("from")}::timestamptz)
          AND (${param("to")}::timestamptz IS NULL OR coalesce(decided_at, requested_at) <= ${param("to")}::timestamptz)
          AND (${param("statuses")}::text[] IS NULL OR status = ANY(${param("statuses")}::text[]))
        ORDER BY requested_at DESC, id DESC
        LIMIT ${sqlText(String(MAX_AUDIT_TRAIL_REQUESTS))}
      ) latest ORDER BY requested_at, id`,
);
