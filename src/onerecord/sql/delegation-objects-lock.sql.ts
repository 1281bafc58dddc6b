import { param, sql, statement } from "../../db/sql-statement";
import { activeReadersOf } from "./readers-of.sql";

/**
 * The logistics objects an access delegation names, locked until the transaction ends (in id order,
 * so two transactions never wait on each other in a cycle), with what the access rules need of them:
 * a delegation is decided, and a revocation withdraws its trust chain, with no other grant on those
 * objects made or withdrawn meanwhile. Objects that do not exist are left out. What it answers is as
 * of the statement's start: a caller that waited for the lock reads the objects again to see what
 * committed meanwhile.
 */
export const lockDelegationObjects = statement<
  { objectIds: string[] },
  { id: string; type: string; awb: string | null; created_by: string; readers: string[] }
>(
  "onerecord/delegation-objects-lock",
  sql`SELECT o.id, o.type, o.awb, o.created_by, ${activeReadersOf("o.id")} AS readers
      FROM logistics_object o WHERE o.id = ANY(${param("objectIds")}::text[])
      ORDER BY o.id FOR UPDATE OF o`,
);
