import { param, sql, sqlText } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";

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

/** A subscription to AWB objects as matched, with what its subscriber may read (AWB_MATCHES). */
export type MatchingAwbRow = MatchingSubscriptionRow & { by_scope: boolean; granted: string[] };

/**
 * Whether subscription `s`'s subscriber may read every AWB object by scope (access-policy.ts canRead:
 * events:read or objects:write), whatever its topic: an OIDC agent by the scopes its token had when it
 * subscribed (agent_scopes: its scopes live in its tokens only); an API client while one of its keys
 * that is not revoked has one. A subscriber with neither reads by its grants only.
 */
export const READS_AWBS_BY_SCOPE = sqlText(`CASE
       WHEN s.agent_scopes IS NOT NULL THEN s.agent_scopes && ARRAY['events:read', 'objects:write']::text[]
       WHEN s.client_id IS NOT NULL THEN EXISTS (SELECT 1 FROM api_key k
                    WHERE k.client_id = s.client_id AND k.revoked_at IS NULL
                      AND k.scopes && ARRAY['events:read', 'objects:write']::text[])
       ELSE false END`);

/** Those of `objectIds` an active grant names subscription `s`'s subscriber for, sorted. */
export const GRANTED_OF_OBJECTS = sql<"objectIds">`ARRAY(SELECT g.object_id FROM logistics_object_grant g
       WHERE g.object_id = ANY(${param("objectIds")}::text[]) AND g.organization_id = s.subscriber
         AND ${GRANT_IS_ACTIVE}
       ORDER BY g.object_id)`;

/**
 * The active subscriptions to some of the AWBs' Waybills and Shipments (`objectIds`: identifier
 * topics) or their classes (`classes`: type topics) that take one of `eventTypes`, and whose
 * subscriber may read AWB objects now, as MatchingAwbRow: `by_scope` all of them
 * (READS_AWBS_BY_SCOPE), else `granted` those of `objectIds` its active grants name (an access
 * delegation).
 */
export const AWB_MATCHES = sql<"objectIds" | "classes" | "eventTypes">`SELECT * FROM (
        SELECT ${MATCHING_SUBSCRIPTION_COLUMNS}, ${READS_AWBS_BY_SCOPE} AS by_scope, ${GRANTED_OF_OBJECTS} AS granted
        FROM onerecord_subscription s
        WHERE ((s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER' AND s.topic = ANY(${param("objectIds")}::text[]))
            OR (s.topic_type = 'LOGISTICS_OBJECT_TYPE' AND s.topic = ANY(${param("classes")}::text[])))
          AND s.event_types && ${param("eventTypes")}::text[]
          AND ${SUBSCRIPTION_ACTIVE}
      ) m
      WHERE by_scope OR cardinality(granted) > 0`;
