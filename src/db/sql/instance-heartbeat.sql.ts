import { param, sql, statement } from "../sql-statement";

/** Keeps the instance's row fresh; no row when it was removed (as stale, or by hand). */
export const instanceHeartbeat = statement<{ id: string }, { id: string }>(
  "db/instance-heartbeat",
  sql`UPDATE gateway_instance SET heartbeat_at = now() WHERE id = ${param("id")}::uuid RETURNING id::text`,
);
