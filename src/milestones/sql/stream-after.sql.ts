import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type StoredMilestone } from "./milestone-columns";

/** The stored events of one AWB after `position`, in stream order, at most `limit`. */
export const streamAfter = statement<{ awb: string; position: bigint; limit: number }, StoredMilestone>(
  "milestones/stream-after",
  sql`SELECT ${COLUMNS} FROM status_event WHERE awb = ${param("awb")} AND position > ${param("position")}
      ORDER BY position LIMIT ${param("limit")}`,
);
