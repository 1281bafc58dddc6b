import { param, sql, statement } from "../../db/sql-statement";
import { ANY_SUBSCRIPTION_DISABLED } from "./subscription-disabled";

/**
 * Finished (DEAD or DELIVERED) deliveries from a fresh schedule: PENDING, or PARKED while their
 * subscription is disabled. No lease token: the holder of the last claim, if still running, is fenced out.
 * Not a ONE Record notification whose subscription is no longer accepted (revoked): nothing would
 * send it (an expired subscription's are still sent, as the claim does).
 */
const REQUEUE = sql`UPDATE delivery d SET
    status = (CASE WHEN ${ANY_SUBSCRIPTION_DISABLED} THEN 'PARKED' ELSE 'PENDING' END)::delivery_status,
    attempt_count = 0, next_attempt_at = now(), completed_at = NULL, lease_until = NULL, lease_token = NULL
  WHERE d.status IN ('DEAD', 'DELIVERED')
    AND NOT EXISTS (SELECT 1 FROM onerecord_subscription o WHERE o.id = d.onerecord_subscription_id
                    AND o.status <> 'REQUEST_ACCEPTED')`;

/** One finished delivery. */
export const requeueDelivery = statement<{ id: string }>(
  "delivery/requeue-delivery",
  sql`${REQUEUE} AND d.id = ${param("id")}::uuid`,
);

/** A client's subscription's dead deliveries, those created in [from, to) when given. */
export const requeueDead = statement<{
  subscriptionId: string;
  clientId: string;
  from: string | null;
  to: string | null;
}>(
  "delivery/requeue-dead",
  sql`${REQUEUE} AND d.status = 'DEAD' AND d.subscription_id = ${param("subscriptionId")}::uuid
        AND d.client_id = ${param("clientId")}::uuid
        AND (${param("from")}::timestamptz IS NULL OR d.created_at >= ${param("from")}::timestamptz)
        AND (${param("to")}::timestamptz IS NULL OR d.created_at < ${param("to")}::timestamptz)`,
);

/** A ONE Record subscription's dead deliveries, those created in [from, to) when given. */
export const requeueDeadOneRecord = statement<{ subscriptionId: string; from: string | null; to: string | null }>(
  "delivery/requeue-dead-onerecord",
  sql`${REQUEUE} AND d.status = 'DEAD' AND d.onerecord_subscription_id = ${param("subscriptionId")}::uuid
        AND (${param("from")}::timestamptz IS NULL OR d.created_at >= ${param("from")}::timestamptz)
        AND (${param("to")}::timestamptz IS NULL OR d.created_at < ${param("to")}::timestamptz)`,
);
