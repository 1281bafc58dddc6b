import { param, sql, statement } from "../../db/sql-statement";
import { DELEGATION_COLUMNS, type AccessDelegationRow } from "./delegation-columns";

/** An AccessDelegationRequest by its id. */
export const readDelegation = statement<{ id: string }, AccessDelegationRow>(
  "onerecord/delegation-read",
  sql`SELECT ${DELEGATION_COLUMNS} FROM onerecord_access_delegation WHERE id = ${param("id")}::uuid`,
);
