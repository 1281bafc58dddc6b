import { param, sql, statement } from "../sql-statement";

export const removeInstance = statement<{ id: string }>(
  "db/remove-instance",
  sql`DELETE FROM gateway_instance WHERE id = ${param("id")}::uuid`,
);
