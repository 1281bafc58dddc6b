import { param, sql, statement } from "../../db/sql-statement";
import { ONE_RECORD_SUBSCRIPTION_DISABLED, SUBSCRIPTION_DISABLED } from "./subscription-disabled";

/**
 * Parks every pending delivery of these subscriptions (legacy ones and ONE Record ones) that no live
 * lease holds, while they are disabled; a lease that ran out is cleared with it (its stale holder is
 * fenced out). A delivery under a live lease is left to its holder: if it records a retry, a claim
 * parks it when due.
 */
export const parkPending = statement<{ subscriptionIds: string[]; oneRecordSubscriptionIds: string[] }, { n: number }>(
  "delivery/park-pending",
  sql`WITH parked AS (
       UPDATE delivery d SET status = 'PARKED', lease_until = NULL, lease_token = NULL
       WHERE d.status = 'PENDING' AND (d.lease_until IS NULL OR d.lease_until < now())
         AND ((d.subscription_id = ANY(${param("subscriptionIds")}::uuid[]) AND ${SUBSCRIPTION_DISABLED})
           OR (d.onerecord_subscription_id = ANY(${param("oneRecordSubscriptionIds")}::uuid[])
               AND ${ONE_RECORD_SUBSCRIPTION_DISABLED}))
       RETURNING 1
     ) SELECT count(*)::int AS n FROM parked`,
);
