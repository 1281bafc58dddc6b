import { param, script, sql } from "../../db/sql-statement";

const TARGET = sql`id = ${param("id")}::uuid`;

/**
 * Enables the ONE Record subscription `id` again after delivery disabled it (clears disabled_at, its
 * reason and the failing clock, and notes when it failed and when it was enabled again, which its
 * SubscriptionRequest reads; statement 2 answers whether it was disabled) and makes its parked
 * notifications due at once. The row is locked FOR UPDATE first, which waits for every statement
 * parking a delivery of it to commit (they read it under a key-share lock,
 * subscription-disabled.ts) and keeps new ones waiting until this commits; the last statement then
 * reads every delivery they parked.
 */
export const enableOneRecordSubscription = script<{ id: string }>(
  "delivery/enable-onerecord-subscription",
  sql`SELECT 1 FROM onerecord_subscription WHERE ${TARGET} FOR UPDATE;
UPDATE onerecord_subscription o SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
  reenabled_at = CASE WHEN prior.disabled_at IS NOT NULL THEN now() ELSE o.reenabled_at END,
  last_failed_at = coalesce(prior.disabled_at, o.last_failed_at)
FROM (SELECT id, disabled_at FROM onerecord_subscription WHERE ${TARGET}) prior
WHERE o.id = prior.id
RETURNING (prior.disabled_at IS NOT NULL) AS was_disabled, o.status;
UPDATE delivery SET status = 'PENDING', next_attempt_at = now()
WHERE status = 'PARKED' AND onerecord_subscription_id = ${param("id")}::uuid`,
);
