import { sqlIdentifier } from "../sql-literal";
import { type SqlStatement, sqlText, statement } from "../sql-statement";

/**
 * VACUUM (ANALYZE) of `tables`: their dead rows' space is reused and their row estimates are fresh.
 * VACUUM takes no parameters and cannot run in a transaction (so not in a script): its text names
 * the tables, each quoted whole.
 */
export function vacuum(tables: readonly string[]): SqlStatement<Record<never, never>, never> {
  return statement("db/vacuum", sqlText(`VACUUM (ANALYZE) ${tables.map(sqlIdentifier).join(", ")}`));
}
