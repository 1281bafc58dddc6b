import { param, sql, statement } from "../../db/sql-statement";
import { OBJECT_COLUMNS, type ObjectRow } from "./object-columns";
import { activeDelegatesOf, activeReadersOf } from "./readers-of.sql";

/**
 * A logistics object's latest state, with the Organizations its active grants name and, among them,
 * the delegates (readers-of.sql.ts).
 */
export const readObject = statement<{ id: string }, ObjectRow & { readers: string[]; delegates: string[] }>(
  "onerecord/object-read",
  sql`SELECT ${OBJECT_COLUMNS}, ${activeReadersOf("o.id")} AS readers, ${activeDelegatesOf("o.id")} AS delegates
      FROM logistics_object o WHERE id = ${param("id")}`,
);
