import { sqlIdentifier } from "../sql-literal";
import { type SqlStatement, sqlText, statement } from "../sql-statement";

/** LISTEN on `channel`: a name, which no parameter can carry, so quoted whole (the case kept, as pg_notify takes it). */
export function listen(channel: string): SqlStatement<Record<never, never>, never> {
  return statement("db/listen", sqlText(`LISTEN ${sqlIdentifier(channel)}`));
}
