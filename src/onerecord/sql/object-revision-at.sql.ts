import { param, sql, statement } from "../../db/sql-statement";

/** The state a logistics object had at a time: its last revision written by then; no row before its creation. */
export const objectRevisionAt = statement<
  { id: string; at: Date },
  { revision: number; body: Record<string, unknown>; types: string[]; modified_at: Date }
>(
  "onerecord/object-revision-at",
  sql`SELECT revision, body, types, modified_at FROM logistics_object_revision
      WHERE object_id = ${param("id")} AND modified_at <= ${param("at")}
      ORDER BY revision DESC LIMIT 1`,
);
