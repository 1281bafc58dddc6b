import { param, sql, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";

/**
 * Rejects the change requests still pending against a revision another change request has just
 * replaced (the specification: "other pending ChangeRequests that affect the same revision MUST be
 * rejected"). Answers the requests it rejected.
 */
export const supersedeActionRequests = statement<
  { objectId: string; revision: number; acceptedId: string; decidedBy: string; reason: string },
  ActionRequestRow
>(
  "onerecord/action-requests-supersede",
  sql`UPDATE action_request
      SET status = 'REQUEST_REJECTED', decided_at = now(), decided_by = ${param("decidedBy")}, reason = ${param("reason")},
          error_status = 409
      WHERE object_id = ${param("objectId")} AND status = 'REQUEST_PENDING' AND revision = ${param("revision")}::int
        AND id <> ${param("acceptedId")}::uuid
      RETURNING ${ACTION_REQUEST_COLUMNS}`,
);
