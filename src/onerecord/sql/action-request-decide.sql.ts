import { param, sql, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";

/**
 * Moves a pending action request to its decided status (accepted, rejected, revoked, failed). No row
 * when it is no longer pending: two decisions, from any instances, cannot both be taken.
 */
export const decideActionRequest = statement<
  { id: string; status: string; decidedBy: string; reason: string | null; errorStatus: number | null },
  ActionRequestRow
>(
  "onerecord/action-request-decide",
  sql`UPDATE action_request
      SET status = ${param("status")}, decided_at = now(), decided_by = ${param("decidedBy")}, reason = ${param("reason")},
          error_status = ${param("errorStatus")}::int
      WHERE id = ${param("id")}::uuid AND status = 'REQUEST_PENDING'
      RETURNING ${ACTION_REQUEST_COLUMNS}`,
);
