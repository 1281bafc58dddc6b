import { param, sql, statement } from "../../db/sql-statement";

/**
 * Holds, until the transaction ends, the lock under which a requester's access delegations are counted
 * and one is added: two requests at a quota's edge count one after the other, from any instance. The
 * two-key form of the advisory lock (class 7_310_027, the requester's hash), apart from the one-key
 * locks of db/sql/advisory-xact-lock.sql.ts and the subscribers' (7_310_026). Taken before the objects'
 * locks (delegation-objects-lock), by every transaction that takes both.
 */
export const lockDelegationRequester = statement<{ requester: string }>(
  "onerecord/delegation-requester-lock",
  sql`SELECT pg_advisory_xact_lock(7310027, hashtext(${param("requester")}::text))`,
);
