import { param, sql, statement } from "../../db/sql-statement";

/** A subscription an ingestion's milestones may notify, of either kind. */
export interface SubscriptionOfAwbsRow {
  /** WEBHOOK: a legacy subscription (table subscription); ONE_RECORD: an onerecord_subscription. */
  kind: "WEBHOOK" | "ONE_RECORD";
  id: string;
  /** Null for a ONE Record subscriber that is no API client. */
  client_id: string | null;
  /** The legacy callback, or the ONE Record subscriber's notifications endpoint. */
  target: string;
  /** The legacy subscription's states, or the ONE Record subscription's event types. */
  list: string[];
  /** The legacy subscription's AWB, or the ONE Record topic (an object's local id or a class IRI). */
  topic: string;
  /** ONE Record only (null for webhooks): LOGISTICS_OBJECT_IDENTIFIER or LOGISTICS_OBJECT_TYPE. */
  topic_type: string | null;
  /** ONE Record only (false for webhooks): sendLogisticsObjectBody. */
  send_body: boolean;
}

/**
 * Every subscription an ingestion may notify, in one statement (it runs for each ingestion that
 * stores milestones, or records carrier statuses ONE Record notifies): the legacy subscriptions of
 * `awbs` (the milestones') neither disabled nor expired at `receivedAt`
 * (docs/RELIABILITY.md, "Retention", "Failing receivers"), and the ONE Record subscriptions that take
 * notifications now (accepted, not expired, not disabled) to one of `objectIds` (identifier topics) or
 * `classes` (type topics) and to one of `eventTypes`. Whether a ONE Record subscriber may read what
 * it is notified of is asked afterwards, of the subscriptions found only (onerecord/notifications-out).
 */
export const subscriptionsOfAwbs = statement<
  { awbs: string[]; receivedAt: string; objectIds: string[]; classes: string[]; eventTypes: string[] },
  SubscriptionOfAwbsRow
>(
  "milestones/subscriptions-of-awbs",
  sql`SELECT 'WEBHOOK' AS kind, id::text AS id, client_id::text AS client_id, callback AS target, states AS list,
             awb AS topic, NULL AS topic_type, false AS send_body
      FROM subscription
      WHERE awb = ANY(${param("awbs")}::text[]) AND disabled_at IS NULL
        AND (expires_at IS NULL OR expires_at > ${param("receivedAt")}::timestamptz)
      UNION ALL
      SELECT 'ONE_RECORD', s.id::text, s.client_id::text, s.endpoint, s.event_types, s.topic, s.topic_type, s.send_body
      FROM onerecord_subscription s
      WHERE ((s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER' AND s.topic = ANY(${param("objectIds")}::text[]))
          OR (s.topic_type = 'LOGISTICS_OBJECT_TYPE' AND s.topic = ANY(${param("classes")}::text[])))
        AND s.event_types && ${param("eventTypes")}::text[]
        AND s.status = 'REQUEST_ACCEPTED' AND s.disabled_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())
      ORDER BY 1, 2`,
);
