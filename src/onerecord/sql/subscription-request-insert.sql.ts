import { param, sql, statement } from "../../db/sql-statement";
import { SUBSCRIPTION_REQUEST_COLUMNS, type SubscriptionRequestRow } from "./subscription-request-columns";

/**
 * A new SubscriptionRequest, decided on arrival (decided_at = requested_at). An accepted one is
 * written only while its subscriber holds no live subscription (accepted, not expired; a disabled one
 * is live) to the same topic type and topic, fewer live ones than its cap (the API client's
 * max_subscriptions when the subscriber is one, else `defaultCap`) and, for a type topic, fewer live
 * type subscriptions than `typeCap`. A rejected one is written only while its requester has had fewer
 * than `rejectedCap` rejected in the last 24 hours. No row: one of these bounds refused it
 * (subscription-request-refusal.sql.ts says which). Run under lockSubscriber, so that two requests at
 * an edge count one after the other.
 * `agentScopes`: an OIDC agent subscriber's token scopes (the matching statements read AWBs' objects by
 * them), null for an API key.
 */
export const insertSubscriptionRequest = statement<
  {
    id: string;
    status: string;
    initiatedBy: string;
    requestedBy: string;
    decidedBy: string;
    reason: string | null;
    errorStatus: number | null;
    subscription: string;
    subscriber: string;
    topicType: string;
    topic: string;
    awb: string | null;
    eventTypes: string[];
    expiresAt: Date | null;
    sendBody: boolean;
    notifyStatusChange: boolean;
    endpoint: string;
    origin: string;
    clientId: string | null;
    agentScopes: string[] | null;
    defaultCap: number;
    typeCap: number;
    rejectedCap: number;
  },
  SubscriptionRequestRow
>(
  "onerecord/subscription-request-insert",
  sql`INSERT INTO onerecord_subscription (id, status, initiated_by, requested_by, requested_at, decided_at, decided_by,
        reason, error_status, subscription, subscriber, topic_type, topic, awb, event_types, expires_at, send_body,
        notify_status_change, endpoint, origin, client_id, agent_scopes)
      SELECT ${param("id")}::uuid, ${param("status")}, ${param("initiatedBy")}, ${param("requestedBy")}, now(), now(),
        ${param("decidedBy")}, ${param("reason")}, ${param("errorStatus")}::int, ${param("subscription")}::jsonb,
        ${param("subscriber")}, ${param("topicType")}, ${param("topic")}, ${param("awb")}, ${param("eventTypes")}::text[],
        ${param("expiresAt")}::timestamptz, ${param("sendBody")}::boolean, ${param("notifyStatusChange")}::boolean,
        ${param("endpoint")}, ${param("origin")}, ${param("clientId")}::uuid, ${param("agentScopes")}::text[]
      WHERE (${param("status")} NOT IN ('REQUEST_ACCEPTED', 'REQUEST_REJECTED'))
        OR (${param("status")} = 'REQUEST_REJECTED'
            AND (SELECT count(*) FROM onerecord_subscription s
                 WHERE s.requested_by = ${param("requestedBy")} AND s.status = 'REQUEST_REJECTED'
                   AND s.requested_at > now() - interval '24 hours') < ${param("rejectedCap")}::int)
        OR (${param("status")} = 'REQUEST_ACCEPTED'
            AND NOT EXISTS (SELECT 1 FROM onerecord_subscription s
                 WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED'
                   AND (s.expires_at IS NULL OR s.expires_at > now())
                   AND s.topic_type = ${param("topicType")} AND s.topic = ${param("topic")})
            AND (${param("topicType")} <> 'LOGISTICS_OBJECT_TYPE'
                 OR (SELECT count(*) FROM onerecord_subscription s
                     WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED'
                       AND (s.expires_at IS NULL OR s.expires_at > now())
                       AND s.topic_type = 'LOGISTICS_OBJECT_TYPE') < ${param("typeCap")}::int)
            AND (SELECT count(*) FROM onerecord_subscription s
                 WHERE s.subscriber = ${param("subscriber")} AND s.status = 'REQUEST_ACCEPTED'
                   AND (s.expires_at IS NULL OR s.expires_at > now()))
                < coalesce((SELECT c.max_subscriptions FROM client c WHERE c.id = ${param("clientId")}::uuid),
                           ${param("defaultCap")}::int))
      RETURNING ${SUBSCRIPTION_REQUEST_COLUMNS}`,
);
