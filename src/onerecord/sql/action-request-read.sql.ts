import { param, sql, statement } from "../../db/sql-statement";
import { ACTION_REQUEST_COLUMNS, type ActionRequestRow } from "./action-request-columns";

export const readActionRequest = statement<{ id: string }, ActionRequestRow>(
  "onerecord/action-request-read",
  sql`SELECT ${ACTION_REQUEST_COLUMNS} FROM action_request WHERE id = ${param("id")}::uuid`,
);
