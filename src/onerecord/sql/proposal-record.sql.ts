import { param, sql, statement } from "../../db/sql-statement";

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
 * A proposal answered: DONE, and each subscription the partner answered recorded as an accepted,
 * publisher-initiated SubscriptionRequest (onerecord_subscription, requested and accepted by the
 * partner: its answer; none when it wanted none), in one
 * statement, so both or neither are written. Only while this claim's lease (`lease`) is the
 * proposal's and it is PENDING: a claim that lost its lease records nothing (answers done 0), so a
 * proposal's subscriptions are recorded once.
 */
export const recordProposal = statement<
  {
    id: string;
    lease: string;
    /** JSON array of AnsweredSubscription. */
    subscriptions: string;
    partner: string;
    topicType: string;
    topic: string;
    awb: string | null;
    endpoint: string;
    origin: string;
    clientId: string | null;
  },
  { done: number; recorded: number }
>(
  "onerecord/proposal-record",
  sql`WITH answered AS (
        SELECT e FROM jsonb_array_elements(${param("subscriptions")}::jsonb) WITH ORDINALITY AS a(e, n) ORDER BY n
      ), done AS (
        UPDATE onerecord_proposal
        SET status = 'DONE', lease_until = NULL, last_error = NULL, attempt_count = attempt_count + 1,
            subscription_id = (SELECT (e->>'id')::uuid FROM answered LIMIT 1)
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
        FROM answered
        WHERE EXISTS (SELECT 1 FROM done)
        RETURNING id
      )
      SELECT (SELECT count(*) FROM done)::int AS done, (SELECT count(*) FROM recorded)::int AS recorded`,
);
