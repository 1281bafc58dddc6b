import { sql } from "../../db/sql-statement";

/**
 * Whether the subscription of the delivery aliased `d` is disabled, read under a key-share lock on
 * its row. Every statement that parks a delivery decides with it, and enabling a subscription first
 * locks its row FOR UPDATE (subscriptions/sql/enable.sql.ts), which conflicts with this lock: a
 * parking statement either waits for an enable under way and then reads the subscription enabled, or
 * holds the enable back until it has committed, so that the enable sees what it parked. No delivery
 * is left parked under an enabled subscription. Key-share does not conflict with the no-key updates
 * of the failing clock (record-outcomes.sql.ts).
 */
export const SUBSCRIPTION_DISABLED = sql`EXISTS (SELECT 1 FROM subscription s WHERE s.id = d.subscription_id AND s.disabled_at IS NOT NULL FOR KEY SHARE OF s)`;

/**
 * The same for the ONE Record subscription of the delivery aliased `d` (enabled again by
 * enable-onerecord-subscription.sql.ts, which locks its row FOR UPDATE first).
 */
export const ONE_RECORD_SUBSCRIPTION_DISABLED = sql`EXISTS (SELECT 1 FROM onerecord_subscription o WHERE o.id = d.onerecord_subscription_id AND o.disabled_at IS NOT NULL FOR KEY SHARE OF o)`;

/** Whether the delivery aliased `d` belongs to a disabled subscription of either kind. */
export const ANY_SUBSCRIPTION_DISABLED = sql`(${SUBSCRIPTION_DISABLED} OR ${ONE_RECORD_SUBSCRIPTION_DISABLED})`;
