import { param, type SqlParam, sql, statement } from "../../db/sql-statement";

/**
 * The lock under which a subscriber's subscriptions are counted and one is added, the subscriber named
 * by `subscriber`: held until the transaction ends. The two-key form of the advisory lock (class
 * 7_310_026, the subscriber's hash) is a key space apart from the one-key locks of
 * db/sql/advisory-xact-lock.sql.ts. Shared by POST /subscriptions (lockSubscriber) and the recording
 * of a publisher-initiated subscription (proposal-record.sql.ts), so each counts after the other.
 */
export const subscriberLock = <Name extends string>(subscriber: SqlParam<Name>) =>
  sql`SELECT pg_advisory_xact_lock(7310026, hashtext(${subscriber}::text))`;

/**
 * Holds, until the transaction ends, the subscriber's lock (subscriberLock): two requests at the cap's
 * edge then count one after the other.
 */
export const lockSubscriber = statement<{ subscriber: string }>(
  "onerecord/subscription-request-lock",
  subscriberLock(param("subscriber")),
);
