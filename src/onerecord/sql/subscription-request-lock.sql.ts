import { param, sql, statement } from "../../db/sql-statement";

/**
 * Holds, until the transaction ends, the lock under which a subscriber's subscriptions are counted and
 * one is added: two requests at the cap's edge then count one after the other. The two-key form of
 * the advisory lock (class 7_310_026, the subscriber's hash) is a key space apart from the one-key
 * locks of db/sql/advisory-xact-lock.sql.ts.
 */
export const lockSubscriber = statement<{ subscriber: string }>(
  "onerecord/subscription-request-lock",
  sql`SELECT pg_advisory_xact_lock(7310026, hashtext(${param("subscriber")}::text))`,
);
