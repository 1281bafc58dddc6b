import { param, sql, statement } from "../../db/sql-statement";
import { SUBSCRIPTION_REQUEST_COLUMNS, type SubscriptionRequestRow } from "./subscription-request-columns";

/**
 * Revokes a pending or accepted SubscriptionRequest and, in the same statement, ends the notifications
 * still queued for it: PENDING and PARKED deliveries become DEAD ("subscription revoked") with their
 * lease token cleared, so a send already under way records nothing when it ends (fenced out, as a
 * purge is). No row when it is neither pending nor accepted: two revocations cannot both be taken.
 * `deliveries_ended` counts the deliveries it ended.
 */
export const revokeSubscriptionRequest = statement<
  { id: string; revokedBy: string },
  SubscriptionRequestRow & { deliveries_ended: number }
>(
  "onerecord/subscription-request-revoke",
  sql`WITH revoked AS (
        UPDATE onerecord_subscription SET status = 'REQUEST_REVOKED', decided_at = now(),
          decided_by = ${param("revokedBy")}
        WHERE id = ${param("id")}::uuid AND status IN ('REQUEST_PENDING', 'REQUEST_ACCEPTED')
        RETURNING *
      ), ended AS (
        UPDATE delivery SET status = 'DEAD', completed_at = now(), last_error = 'subscription revoked',
          lease_until = NULL, lease_token = NULL
        WHERE onerecord_subscription_id IN (SELECT id FROM revoked) AND status IN ('PENDING', 'PARKED')
        RETURNING 1
      )
      SELECT ${SUBSCRIPTION_REQUEST_COLUMNS}, (SELECT count(*) FROM ended)::int AS deliveries_ended FROM revoked`,
);
