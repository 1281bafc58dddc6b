import { param, sql, statement } from "../../db/sql-statement";

/** The last position of each of `awbs`' streams; an AWB without a stream has no row. */
export const streamHeads = statement<{ awbs: string[] }, { awb: string; last_position: bigint }>(
  "milestones/stream-heads",
  sql`SELECT awb, last_position FROM awb_stream WHERE awb = ANY(${param("awbs")}::text[])`,
);
