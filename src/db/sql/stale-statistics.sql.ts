import { param, sql, statement } from "../sql-statement";

/**
 * Which of `tables` changed by more rows since they were last analysed (by anyone) than the planner
 * then counted in them, plus `slack` — never analysed counts as none — so their plans rest on a
 * size or a mix of rows they no longer have. PostgreSQL only: PGlite keeps no statistics
 * (`pg_stat_user_tables` reads 0 there, so nothing is ever stale). Only tables the connection's
 * role owns (or a role it belongs to): ANALYZE skips another's table with a warning, so it is never
 * named (a database owner's role could analyse it too; such a table is left to autovacuum).
 */
export const staleStatistics = statement<{ tables: string[]; slack: number }, { name: string }>(
  "db/stale-statistics",
  sql`SELECT s.relname AS name
      FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
      WHERE s.schemaname = current_schema() AND s.relname = ANY(${param("tables")}::text[])
        AND pg_has_role(c.relowner, 'USAGE')
        AND s.n_mod_since_analyze > greatest(c.reltuples, 0) + ${param("slack")}::int`,
);
