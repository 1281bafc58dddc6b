import { param, sql, statement } from "../../db/sql-statement";

/** The Organizations granted read access to each of the objects (access-policy.ts ObjectMeta.readers). */
export const readersOf = statement<{ objectIds: string[] }, { object_id: string; organization_id: string }>(
  "onerecord/readers-of",
  sql`SELECT object_id, organization_id FROM logistics_object_grant
      WHERE object_id = ANY(${param("objectIds")}::text[])
      ORDER BY object_id, organization_id`,
);
