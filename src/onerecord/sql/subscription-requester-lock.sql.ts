import { param, sql, statement } from "../../db/sql-statement";

/**
 * Holds, until the transaction ends, the lock under which one requester's third-party requests are
 * counted (pending ones at an insert, live ones at the holder's acceptance): two at a cap's edge, for
 * different subscribers, count one after the other. Its own key space (class 7_310_027, the
 * requester's hash), taken before the subscriber's lock (subscriberLock) and never after it, so the
 * two cannot wait on each other.
 */
export const lockRequester = statement<{ requester: string }>(
  "onerecord/subscription-requester-lock",
  sql`SELECT pg_advisory_xact_lock(7310027, hashtext(${param("requester")}::text))`,
);
