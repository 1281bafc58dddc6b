import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { liveThirdParties, mayTakeLiveSubscription } from "./subscription-request-bounds";
import { SUBSCRIPTION_REQUEST_COLUMNS, type SubscriptionRequestRow } from "./subscription-request-columns";

const row = (column: string) => sqlText(`t.${column}`);

/**
 * The holder's decision on a pending SubscriptionRequest (a third party's). Accepted only while its
 * subscriber holds no live subscription to the topic and its requester fewer than `thirdPartyCap` live
 * third parties' (subscription-request-bounds.ts: run under the requester's lock, then the subscriber's);
 * rejected with `reason` and `errorStatus`. No row when it is no longer pending, or when the bounds
 * refused an acceptance (the caller reads which): two decisions, from any instances, cannot both be
 * taken.
 */
export const decideSubscriptionRequest = statement<
  {
    id: string;
    status: "REQUEST_ACCEPTED" | "REQUEST_REJECTED";
    decidedBy: string;
    reason: string | null;
    errorStatus: number | null;
    thirdPartyCap: number;
  },
  SubscriptionRequestRow
>(
  "onerecord/subscription-request-decide",
  sql`UPDATE onerecord_subscription t
      SET status = ${param("status")}, decided_at = now(), decided_by = ${param("decidedBy")},
          reason = ${param("reason")}, error_status = ${param("errorStatus")}::int,
          accepted_at = CASE WHEN ${param("status")} = 'REQUEST_ACCEPTED' THEN now() END,
          accepted_by = CASE WHEN ${param("status")} = 'REQUEST_ACCEPTED' THEN ${param("decidedBy")} END
      WHERE t.id = ${param("id")}::uuid AND t.status = 'REQUEST_PENDING'
        AND (${param("status")} = 'REQUEST_REJECTED'
             OR (${liveThirdParties(sqlText("t.requested_by"))} < ${param("thirdPartyCap")}::int
                 AND ${mayTakeLiveSubscription({
                   thirdParty: true,
                   subscriber: row("subscriber"),
                   topicType: row("topic_type"),
                   topic: row("topic"),
                 })}))
      RETURNING ${SUBSCRIPTION_REQUEST_COLUMNS}`,
);
