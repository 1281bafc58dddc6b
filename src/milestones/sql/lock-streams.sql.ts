import { param, sql, statement } from "../../db/sql-statement";

/**
 * Locks the streams of `awbs` (creating missing ones, head 0) until the transaction ends and answers
 * their heads. Rows are locked in AWB order, so two ingestions do not deadlock on stream rows.
 */
export const lockStreams = statement<{ awbs: string[] }, { awb: string; last_position: bigint }>(
  "milestones/lock-streams",
  sql`INSERT INTO awb_stream (awb, last_position) SELECT a, 0 FROM unnest(${param("awbs")}::text[]) AS a ORDER BY a
      ON CONFLICT (awb) DO UPDATE SET last_position = awb_stream.last_position
      RETURNING awb, last_position`,
);
