import { param, sql, statement } from "../../db/sql-statement";
import { OBJECT_COLUMNS, type ObjectRow } from "./object-columns";
import { activeGrantOf } from "./readers-of.sql";

const grant = activeGrantOf("o.id");

/**
 * A logistics object's latest state as `reader` may see it: `readers` and `delegates` name `reader`
 * when its active grant makes it one, and nobody else. What the access check of one caller needs,
 * in one index probe of the grants whatever their number (readers-of.sql.ts activeGrantOf).
 */
export const readObjectAs = statement<
  { id: string; reader: string },
  ObjectRow & { readers: string[]; delegates: string[] }
>(
  "onerecord/object-read-as",
  sql`SELECT ${OBJECT_COLUMNS}, ${grant.readers} AS readers, ${grant.delegates} AS delegates
      FROM logistics_object o WHERE id = ${param("id")}`,
);
