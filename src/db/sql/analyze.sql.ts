import { sqlIdentifier } from "../sql-literal";
import { type SqlStatement, sqlText, statement } from "../sql-statement";

/**
 * ANALYZE of `tables`: the planner's statistics of them, fresh. SKIP_LOCKED: a table another session
 * holds a conflicting lock on (autovacuum's vacuum of it, a migration's ALTER TABLE) is skipped, not
 * waited for — waiting would hold a pooled connection, queue others behind it, and make PostgreSQL
 * cancel that autovacuum. Its text names the tables, each quoted whole.
 */
export function analyze(tables: readonly string[]): SqlStatement<Record<never, never>, never> {
  return statement("db/analyze", sqlText(`ANALYZE (SKIP_LOCKED) ${tables.map(sqlIdentifier).join(", ")}`));
}
