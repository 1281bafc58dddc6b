import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";
import { MAX_CHANGE_OPERATIONS, MAX_CHANGE_REQUEST_BYTES } from "../objects/change-bounds";

/** The most action requests one audit trail lists (the latest ones). */
export const MAX_AUDIT_TRAIL_REQUESTS = 100;
/**
 * The most operations of their Changes one audit trail holds in all: compacting an answer costs about
 * 0.7 ms of CPU per operation, so this bounds one GET's work (about 150 ms) as the count bounds its rows.
 */
export const MAX_AUDIT_TRAIL_OPERATIONS = 200;
/** The most bytes of stored requests one audit trail holds in all: it bounds the answer's size. */
export const MAX_AUDIT_TRAIL_BYTES = 1024 * 1024;

/**
 * An object's action requests for its audit trail, oldest first: those last updated (decided, or else
 * requested) within the period, in the statuses asked (null: every one); of those, the latest ones
 * whose operations and bytes, summed from the latest down, stay within the budgets above. The list
 * stops at the first request that does not fit, so what is left out is always older than what is in.
 */
export const actionRequestsOfObject = statement<
  { objectId: string; from: Date | null; to: Date | null; statuses: string[] | null },
  ActionRequestRow
>(
  "onerecord/action-requests-of-object",
  sql`SELECT ${ACTION_REQUEST_COLUMNS} FROM action_request
      WHERE id IN (
        SELECT id FROM (
          SELECT id,
                 sum(operations) OVER latest_first AS operations_so_far,
                 sum(bytes) OVER latest_first AS bytes_so_far,
                 row_number() OVER latest_first AS rank
          FROM action_request
          WHERE object_id = ${param("objectId")}
            AND (${param("from")}::timestamptz IS NULL OR coalesce(decided_at, requested_at) >= ${param("from")}::timestamptz)
            AND (${param("to")}::timestamptz IS NULL OR coalesce(decided_at, requested_at) <= ${param("to")}::timestamptz)
            AND (${param("statuses")}::text[] IS NULL OR status = ANY(${param("statuses")}::text[]))
            -- A request over what one may hold now (stored under looser rules) is read on its own only.
            AND operations <= ${sqlText(String(MAX_CHANGE_OPERATIONS))} AND bytes <= ${sqlText(String(MAX_CHANGE_REQUEST_BYTES))}
          WINDOW latest_first AS (ORDER BY requested_at DESC, id DESC ROWS UNBOUNDED PRECEDING)
        ) weighed
        WHERE rank <= ${sqlText(String(MAX_AUDIT_TRAIL_REQUESTS))}
          AND operations_so_far <= ${sqlText(String(MAX_AUDIT_TRAIL_OPERATIONS))}
          AND bytes_so_far <= ${sqlText(String(MAX_AUDIT_TRAIL_BYTES))}
      )
      ORDER BY requested_at, id`,
);
