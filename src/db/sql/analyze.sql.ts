import { sqlIdentifier } from "../sql-literal";
import { type SqlStatement, sqlText, statement } from "../sql-statement";

/** ANALYZE of `tables`: the planner's statistics of them, fresh. Its text names the tables, each quoted whole. */
export function analyze(tables: readonly string[]): SqlStatement<Record<never, never>, never> {
  return statement("db/analyze", sqlText(`ANALYZE ${tables.map(sqlIdentifier).join(", ")}`));
}
