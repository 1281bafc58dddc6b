import { param, sql, statement } from "../../db/sql-statement";

/**
 * Holds, until the transaction ends, the lock under which what one requester asks for is counted and
 * added: its access delegations against their quotas, its third parties' subscription requests
 * against their caps. Two requests at an edge count one after the other, from any instance. The
 * two-key form of the advisory lock (class 7_310_027, the requester's hash), apart from the one-key
 * locks of db/sql/advisory-xact-lock.sql.ts and the subscribers' (7_310_026). Taken first, before the
 * objects' locks (delegation-objects-lock) or the subscriber's (subscriberLock), by every transaction
 * that takes both, so none waits on another in the other order.
 */
export const lockRequester = statement<{ requester: string }>(
  "onerecord/requester-lock",
  sql`SELECT pg_advisory_xact_lock(7310027, hashtext(${param("requester")}::text))`,
);
