import { param, sql, statement } from "../../db/sql-statement";

/** The highest position retention has deleted from `awb`'s stream; no row when none. */
export const prunedThrough = statement<{ awb: string }, { pruned_through: bigint }>(
  "retention/pruned-through",
  sql`SELECT pruned_through FROM awb_stream_pruned WHERE awb = ${param("awb")}`,
);
