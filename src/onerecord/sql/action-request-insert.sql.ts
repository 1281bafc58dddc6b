import { param, sql, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";

/** A new action request, pending, with its weights: its Change's operations and its stored size. */
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
  },
  ActionRequestRow
>(
  "onerecord/action-request-insert",
  sql`INSERT INTO action_request (id, kind, object_id, status, request, requested_by, revision, operations, bytes)
      VALUES (${param("id")}::uuid, ${param("kind")}, ${param("objectId")}, 'REQUEST_PENDING', ${param("request")}::jsonb,
              ${param("requestedBy")}, ${param("revision")}::int, ${param("operations")}::int, ${param("bytes")}::int)
      RETURNING ${ACTION_REQUEST_COLUMNS}`,
);
