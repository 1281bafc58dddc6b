import { sqlText } from "../../db/sql-statement";

/** A SubscriptionRequest's row (onerecord_subscription) as the subscription-request statements answer it. */
export interface SubscriptionRequestRow {
  id: string;
  /** REQUEST_PENDING, REQUEST_ACCEPTED, REQUEST_REJECTED, REQUEST_REVOKED, REQUEST_FAILED. */
  status: string;
  /** SUBSCRIBER (POST /subscriptions) or PUBLISHER (proposed by this server to a partner). */
  initiated_by: string;
  requested_by: string;
  requested_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  reason: string | null;
  error_status: number | null;
  /** The api:Subscription, expanded, this server's objects by local id. */
  subscription: Record<string, unknown>;
  subscriber: string;
  topic_type: string;
  /** The object's local id (LOGISTICS_OBJECT_IDENTIFIER) or the class IRI (LOGISTICS_OBJECT_TYPE). */
  topic: string;
  awb: string | null;
  event_types: string[];
  expires_at: Date | null;
  send_body: boolean;
  notify_status_change: boolean;
  endpoint: string;
  origin: string;
  client_id: string | null;
  /** When delivery disabled it (its notifications kept failing); null while enabled. */
  disabled_at: Date | null;
  disabled_reason: string | null;
  /** When an operator enabled it again after delivery disabled it (it reads accepted since then). */
  reenabled_at: Date | null;
  /** When delivery disabled it, the last time it was enabled again. */
  last_failed_at: Date | null;
  /** When the holder accepted it after it waited for that decision (a third party's); null otherwise. */
  accepted_at: Date | null;
  accepted_by: string | null;
}

export const SUBSCRIPTION_REQUEST_COLUMNS = sqlText(
  "id::text AS id, status, initiated_by, requested_by, requested_at, decided_at, decided_by, reason, error_status, " +
    "subscription, subscriber, topic_type, topic, awb, event_types, expires_at, send_body, notify_status_change, " +
    "endpoint, origin, client_id::text AS client_id, disabled_at, disabled_reason, reenabled_at, last_failed_at, " +
    "accepted_at, accepted_by",
);
