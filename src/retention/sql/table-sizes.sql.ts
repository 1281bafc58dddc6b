import { param, sql, statement } from "../../db/sql-statement";

/** Each of `tables`' size on disk (indexes and TOAST included) and its estimated row count. */
export const tableSizes = statement<{ tables: string[] }, { table: string; bytes: bigint | number; rows: number }>(
  "retention/table-sizes",
  sql`SELECT c.relname AS table, pg_total_relation_size(c.oid) AS bytes, greatest(c.reltuples, 0)::float8 AS rows
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY(${param("tables")}::text[])`,
);
