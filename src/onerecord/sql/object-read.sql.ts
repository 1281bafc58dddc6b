import { param, sql, statement } from "../../db/sql-statement";
import { OBJECT_COLUMNS, type ObjectRow } from "./object-columns";

/** A logistics object's latest state, with the Organizations its creator granted read access to. */
export const readObject = statement<{ id: string }, ObjectRow & { readers: string[] }>(
  "onerecord/object-read",
  sql`SELECT ${OBJECT_COLUMNS},
        ARRAY(SELECT g.organization_id FROM logistics_object_grant g WHERE g.object_id = o.id) AS readers
      FROM logistics_object o WHERE id = ${param("id")}`,
);
