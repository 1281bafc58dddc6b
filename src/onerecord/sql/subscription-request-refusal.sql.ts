import { param, sql, statement } from "../../db/sql-statement";
import { liveThirdParties } from "./subscription-request-bounds";

/**
 * What subscription-request-insert.sql.ts weighed for a subscriber, read under the same lock when it
 * wrote nothing, to say why: the live (accepted, unexpired) SubscriptionRequest of the subscriber to
 * that topic type and topic (null: none), its own live subscriptions and own live type subscriptions (not
 * those others asked for on its behalf), and the
 * requests of `requestedBy` rejected in the last 24 hours, those pending now and its live third parties'.
 */
export const subscriptionRequestRefusal = statement<
  { subscriber: string; requestedBy: string; topicType: string; topic: string },
  {
    existing: string | null;
    live: number;
    live_types: number;
    rejected_recently: number;
    pending: number;
    third_parties: number;
  }
>(
  "onerecord/subscription-request-refusal",
  sql`SELECT
        (SELECT s.id::text FROM onerecord_subscription s
         WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED'
           AND (s.expires_at IS NULL OR s.expires_at > now())
           AND s.topic_type = ${param("topicType")} AND s.topic = ${param("topic")}
         ORDER BY s.requested_at LIMIT 1) AS existing,
        (SELECT count(*)::int FROM onerecord_subscription s
         WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED' AND s.accepted_at IS NULL
           AND (s.expires_at IS NULL OR s.expires_at > now())) AS live,
        (SELECT count(*)::int FROM onerecord_subscription s
         WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED' AND s.accepted_at IS NULL
           AND (s.expires_at IS NULL OR s.expires_at > now())
           AND s.topic_type = 'LOGISTICS_OBJECT_TYPE') AS live_types,
        (SELECT count(*)::int FROM onerecord_subscription s
         WHERE s.requested_by = ${param("requestedBy")} AND s.status = 'REQUEST_REJECTED'
           AND s.requested_at > now() - interval '24 hours') AS rejected_recently,
        (SELECT count(*)::int FROM onerecord_subscription s
         WHERE s.requested_by = ${param("requestedBy")} AND s.status = 'REQUEST_PENDING') AS pending,
        ${liveThirdParties(sql`${param("requestedBy")}`)}::int AS third_parties`,
);
