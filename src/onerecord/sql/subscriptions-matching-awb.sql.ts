import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";
import {
  MATCHING_SUBSCRIPTION_COLUMNS,
  type MatchingSubscriptionRow,
  SUBSCRIPTION_ACTIVE,
} from "./subscription-matching-columns";

/**
 * The active subscriptions to some of the AWBs' Waybills and Shipments (`objectIds`: identifier
 * topics) or their classes (`classes`: type topics) that take one of `eventTypes`, and whose
 * subscriber may read AWBs' objects now (access-policy.ts canRead):
 * - `by_scope`: all of them — an API client while one of its keys that is not revoked has events:read
 *   or objects:write; an OIDC agent, whose scopes live in its tokens only, on an identifier
 *   subscription (accepted because it could read that object then);
 * - `granted`: else those of `objectIds` an active grant names it for (an access delegation).
 * Run by every ingestion that stores milestones: without subscriptions it is an index probe.
 */
export const subscriptionsMatchingAwb = statement<
  { objectIds: string[]; classes: string[]; eventTypes: string[] },
  MatchingSubscriptionRow & { by_scope: boolean; granted: string[] }
>(
  "onerecord/subscriptions-matching-awb",
  sql`SELECT * FROM (
        SELECT ${MATCHING_SUBSCRIPTION_COLUMNS},
               CASE WHEN s.client_id IS NULL THEN s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER'
                    ELSE EXISTS (SELECT 1 FROM api_key k
                                 WHERE k.client_id = s.client_id AND k.revoked_at IS NULL
                                   AND k.scopes && ARRAY['events:read', 'objects:write']::text[]) END AS by_scope,
               ARRAY(SELECT g.object_id FROM logistics_object_grant g
                     WHERE g.object_id = ANY(${param("objectIds")}::text[]) AND g.organization_id = s.subscriber
                       AND ${GRANT_IS_ACTIVE}
                     ORDER BY g.object_id) AS granted
        FROM onerecord_subscription s
        WHERE ((s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER' AND s.topic = ANY(${param("objectIds")}::text[]))
            OR (s.topic_type = 'LOGISTICS_OBJECT_TYPE' AND s.topic = ANY(${param("classes")}::text[])))
          AND s.event_types && ${param("eventTypes")}::text[]
          AND ${SUBSCRIPTION_ACTIVE}
      ) m
      WHERE by_scope OR cardinality(granted) > 0
      ORDER BY id`,
);
