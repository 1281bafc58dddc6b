import { param, sql, statement } from "../../db/sql-statement";

/**
 * Holds, until the transaction ends, the lock under which one requester's third-party requests are
 * counted (pending ones at an insert, live ones at the holder's acceptance): two at a cap's edge, for
 * different subscribers, count one after the other. The same key as delegation-requester-lock.sql.ts
 * (class 7_310_027, the requester's hash): both are taken first, before the subscriber's lock
 * (subscriberLock) or the objects', so sharing it only serializes one requester's requests.
 */
export const lockRequester = statement<{ requester: string }>(
  "onerecord/subscription-requester-lock",
  sql`SELECT pg_advisory_xact_lock(7310027, hashtext(${param("requester")}::text))`,
);
