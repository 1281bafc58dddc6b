import { param, sql, statement } from "../../db/sql-statement";

/** How many change requests one requester has pending on one object (the cap on pending requests). */
export const countPendingActionRequests = statement<{ objectId: string; requestedBy: string }, { pending: number }>(
  "onerecord/action-requests-pending-count",
  sql`SELECT count(*)::int AS pending FROM action_request
      WHERE object_id = ${param("objectId")} AND requested_by = ${param("requestedBy")} AND status = 'REQUEST_PENDING'`,
);
