import { param, sql, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";
import { spendQuota } from "./quota-spend";

/**
 * A new action request, pending, with its weights (its Change's operations, its stored size), stored
 * only when its requester's daily quota takes it (quota-spend.ts), in the same statement. No row
 * answered: the quota is spent, and nothing was stored.
 */
export const insertActionRequest = statement<
  {
    id: string;
    kind: string;
    objectId: string;
    request: string;
    requestedBy: string;
    revision: number;
    operations: number;
    bytes: number;
    quota: string;
    maxCount: number;
    maxBytes: number;
  },
  ActionRequestRow
>(
  "onerecord/action-request-insert",
  sql`WITH spent AS (${spendQuota(param("requestedBy"), sql`(SELECT 1) AS one`)})
      INSERT INTO action_request (id, kind, object_id, status, request, requested_by, revision, operations, bytes)
      SELECT ${param("id")}::uuid, ${param("kind")}, ${param("objectId")}, 'REQUEST_PENDING', ${param("request")}::jsonb,
             ${param("requestedBy")}, ${param("revision")}::int, ${param("operations")}::int, ${param("bytes")}::int
      FROM spent
      RETURNING ${ACTION_REQUEST_COLUMNS}`,
);
