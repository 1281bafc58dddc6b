import { param, sql, statement } from "../../db/sql-statement";
import { mayTakeLiveSubscription } from "./subscription-request-bounds";
import { SUBSCRIPTION_REQUEST_COLUMNS, type SubscriptionRequestRow } from "./subscription-request-columns";

/**
 * A new SubscriptionRequest: decided on arrival (decided_at = requested_at), or pending the holder's
 * decision (a third party's). An accepted one is written only while its subscriber may take one more
 * live subscription (subscription-request-bounds.ts). A rejected one is written only while its requester
 * has had fewer than `rejectedCap` rejected in the last 24 hours, a pending one while its requester has
 * fewer than `pendingCap` pending. No row: one of these bounds refused it
 * (subscription-request-refusal.sql.ts says which). Run under lockSubscriber, so that two requests at
 * an edge count one after the other.
 * `agentScopes`: an OIDC agent subscriber's token scopes (the matching statements read AWBs' objects by
 * them), null for an API key and for a third party.
 */
export const insertSubscriptionRequest = statement<
  {
    id: string;
    status: string;
    initiatedBy: string;
    requestedBy: string;
    decidedBy: string | null;
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
    pendingCap: number;
  },
  SubscriptionRequestRow
>(
  "onerecord/subscription-request-insert",
  sql`INSERT INTO onerecord_subscription (id, status, initiated_by, requested_by, requested_at, decided_at, decided_by,
        reason, error_status, subscription, subscriber, topic_type, topic, awb, event_types, expires_at, send_body,
        notify_status_change, endpoint, origin, client_id, agent_scopes)
      SELECT ${param("id")}::uuid, ${param("status")}, ${param("initiatedBy")}, ${param("requestedBy")}, now(),
        CASE WHEN ${param("status")} = 'REQUEST_PENDING' THEN NULL ELSE now() END,
        ${param("decidedBy")}, ${param("reason")}, ${param("errorStatus")}::int, ${param("subscription")}::jsonb,
        ${param("subscriber")}, ${param("topicType")}, ${param("topic")}, ${param("awb")}, ${param("eventTypes")}::text[],
        ${param("expiresAt")}::timestamptz, ${param("sendBody")}::boolean, ${param("notifyStatusChange")}::boolean,
        ${param("endpoint")}, ${param("origin")}, ${param("clientId")}::uuid, ${param("agentScopes")}::text[]
      WHERE (${param("status")} = 'REQUEST_PENDING'
            AND (SELECT count(*) FROM onerecord_subscription s
                 WHERE s.requested_by = ${param("requestedBy")} AND s.status = 'REQUEST_PENDING') < ${param("pendingCap")}::int)
        OR (${param("status")} = 'REQUEST_REJECTED'
            AND (SELECT count(*) FROM onerecord_subscription s
                 WHERE s.requested_by = ${param("requestedBy")} AND s.status = 'REQUEST_REJECTED'
                   AND s.requested_at > now() - interval '24 hours') < ${param("rejectedCap")}::int)
        OR (${param("status")} = 'REQUEST_ACCEPTED'
            AND ${mayTakeLiveSubscription({
              thirdParty: false,
              subscriber: sql`${param("subscriber")}`,
              topicType: sql`${param("topicType")}`,
              topic: sql`${param("topic")}`,
              clientId: sql`${param("clientId")}`,
              defaultCap: sql`${param("defaultCap")}`,
              typeCap: sql`${param("typeCap")}`,
            })})
      RETURNING ${SUBSCRIPTION_REQUEST_COLUMNS}`,
);
