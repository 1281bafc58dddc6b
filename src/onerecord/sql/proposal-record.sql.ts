import { param, script, sql } from "../../db/sql-statement";
import { subscriberLock } from "./subscription-request-lock.sql";

/** One subscription the partner answered, as `recordProposal` takes it (in its `subscriptions` JSON array). */
export interface AnsweredSubscription {
  /** The SubscriptionRequest's id (made by this server). */
  readonly id: string;
  /** The api:Subscription as expanded JSON-LD, as answered. */
  readonly subscription: unknown;
  readonly eventTypes: readonly string[];
  /** ISO 8601, or null for none. */
  readonly expiresAt: string | null;
  readonly sendBody: boolean;
  readonly notifyStatusChange: boolean;
}

/**
 * A proposal answered: DONE, and the FIRST subscription of the partner's answer recorded as an
 * accepted, publisher-initiated SubscriptionRequest (onerecord_subscription, requested and accepted
 * by the partner: its answer) — at most one, as POST /subscriptions takes at most one live
 * subscription per subscriber and topic; none when the answer holds none, or when the partner
 * already holds a live one (accepted, not expired; a disabled one is live) to this topic type and
 * topic (the proposal is DONE then, its subscription_id null).
 *
 * A script: the subscriber's lock (subscriberLock, the one POST /subscriptions takes) first, then
 * the recording, in one implicit transaction, so the live-subscription check reads after any
 * concurrent POST /subscriptions of the partner committed. Only while this claim's lease (`lease`)
 * is the proposal's and it is PENDING: a claim that lost its lease records nothing (done 0), so a
 * proposal's subscription is recorded once. The second statement's one row: { done, recorded }.
 */
export const recordProposal = script<{
  id: string;
  lease: string;
  /** JSON array of AnsweredSubscription; only the first is taken. */
  subscriptions: string;
  partner: string;
  topicType: string;
  topic: string;
  awb: string | null;
  endpoint: string;
  origin: string;
  clientId: string | null;
}>(
  "onerecord/proposal-record",
  sql`${subscriberLock(param("partner"))};
      WITH answered AS (
        SELECT e FROM jsonb_array_elements(${param("subscriptions")}::jsonb) WITH ORDINALITY AS a(e, n)
        ORDER BY n LIMIT 1
      ), taken AS (
        SELECT e FROM answered
        WHERE NOT EXISTS (SELECT 1 FROM onerecord_subscription s
                          WHERE s.subscriber = ${param("partner")} AND s.status = 'REQUEST_ACCEPTED'
                            AND (s.expires_at IS NULL OR s.expires_at > now())
                            AND s.topic_type = ${param("topicType")} AND s.topic = ${param("topic")})
      ), done AS (
        UPDATE onerecord_proposal
        SET status = 'DONE', lease_until = NULL, last_error = NULL, attempt_count = attempt_count + 1,
            subscription_id = (SELECT (e->>'id')::uuid FROM taken)
        WHERE id = ${param("id")}::uuid AND lease_until = ${param("lease")}::timestamptz AND status = 'PENDING'
        RETURNING id
      ), recorded AS (
        INSERT INTO onerecord_subscription (
          id, status, initiated_by, requested_by, decided_at, decided_by, subscription, subscriber,
          topic_type, topic, awb, event_types, expires_at, send_body, notify_status_change, endpoint, origin, client_id)
        SELECT (e->>'id')::uuid, 'REQUEST_ACCEPTED', 'PUBLISHER', ${param("partner")}, now(), ${param("partner")},
               e->'subscription', ${param("partner")}, ${param("topicType")}, ${param("topic")}, ${param("awb")},
               ARRAY(SELECT jsonb_array_elements_text(e->'eventTypes')), (e->>'expiresAt')::timestamptz,
               (e->>'sendBody')::boolean, (e->>'notifyStatusChange')::boolean,
               ${param("endpoint")}, ${param("origin")}, ${param("clientId")}::uuid
        FROM taken
        WHERE EXISTS (SELECT 1 FROM done)
        RETURNING id
      )
      SELECT (SELECT count(*) FROM done)::int AS done, (SELECT count(*) FROM recorded)::int AS recorded`,
);
