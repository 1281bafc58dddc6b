import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";

/** A logistics object an access delegation names, as the holder's policy and the quotas see it. */
export interface LockedObjectRow {
  id: string;
  type: string;
  awb: string | null;
  created_by: string;
  /** The requester's own active grant to it: whether it may pass it on; null when it holds none. */
  requester_may_pass_on: boolean | null;
  /** The Organizations the requester's access delegations have granted it to (stored, active or not). */
  delegated_by_requester: number;
}

/**
 * The logistics objects an access delegation names, locked until the transaction ends (in id order,
 * so two transactions never wait on each other in a cycle), with what the access rules need of them:
 * a delegation is decided, and a revocation withdraws its trust chain, with no other grant on those
 * objects made or withdrawn meanwhile. Objects that do not exist are left out. What it answers is as
 * of the statement's start: a caller that waited for the lock reads the objects again to see what
 * committed meanwhile. Each grant read is found by an index (the primary key, or grantor and object).
 */
export const lockDelegationObjects = statement<{ objectIds: string[]; requester: string }, LockedObjectRow>(
  "onerecord/delegation-objects-lock",
  sql`SELECT o.id, o.type, o.awb, o.created_by,
        (SELECT g.may_pass_on FROM logistics_object_grant g
         WHERE g.object_id = o.id AND g.organization_id = ${param("requester")} AND ${GRANT_IS_ACTIVE})
          AS requester_may_pass_on,
        (SELECT count(*) FROM logistics_object_grant g
         WHERE g.granted_by = ${param("requester")} AND g.object_id = o.id AND g.delegation_id IS NOT NULL)::int
          AS delegated_by_requester
      FROM logistics_object o WHERE o.id = ANY(${param("objectIds")}::text[])
      ORDER BY o.id FOR UPDATE OF o`,
);
