import { sqlText } from "../../db/sql-statement";

/** A ONE Record subscription as the matching statements answer it: what a notification to it needs. */
export interface MatchingSubscriptionRow {
  /** The SubscriptionRequest's id. */
  id: string;
  /** LOGISTICS_OBJECT_IDENTIFIER or LOGISTICS_OBJECT_TYPE. */
  topic_type: string;
  /** The object's local id or the class IRI. */
  topic: string;
  event_types: string[];
  send_body: boolean;
  endpoint: string;
  client_id: string | null;
}

export const MATCHING_SUBSCRIPTION_COLUMNS = sqlText(
  "s.id::text AS id, s.topic_type, s.topic, s.event_types, s.send_body, s.endpoint, s.client_id::text AS client_id",
);

/**
 * A subscription that takes notifications now: accepted, not expired, not disabled by failing
 * deliveries (the outbox's claim checks the same again when it sends).
 */
export const SUBSCRIPTION_ACTIVE = sqlText(
  "s.status = 'REQUEST_ACCEPTED' AND s.disabled_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())",
);
