import { param, sql, statement } from "../../db/sql-statement";
import {
  MATCHING_SUBSCRIPTION_COLUMNS,
  type MatchingSubscriptionRow,
  SUBSCRIPTION_ACTIVE,
} from "./subscription-matching-columns";

/**
 * The active subscriptions to some of the AWBs' Waybills and Shipments (`objectIds`: identifier
 * topics) or their classes (`classes`: type topics) that take one of `eventTypes`, and whose
 * subscriber may read the AWBs' objects now: an API client while one of its keys that is not revoked
 * has events:read or objects:write (access-policy.ts canRead); an OIDC agent, whose scopes live in
 * its tokens only, on an identifier subscription (accepted because it could read that object).
 * Run by every ingestion that stores milestones: without subscriptions it is an index probe.
 */
export const subscriptionsMatchingAwb = statement<
  { objectIds: string[]; classes: string[]; eventTypes: string[] },
  MatchingSubscriptionRow
>(
  "onerecord/subscriptions-matching-awb",
  sql`SELECT ${MATCHING_SUBSCRIPTION_COLUMNS}
      FROM onerecord_subscription s
      WHERE ((s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER' AND s.topic = ANY(${param("objectIds")}::text[]))
          OR (s.topic_type = 'LOGISTICS_OBJECT_TYPE' AND s.topic = ANY(${param("classes")}::text[])))
        AND s.event_types && ${param("eventTypes")}::text[]
        AND ${SUBSCRIPTION_ACTIVE}
        AND CASE WHEN s.client_id IS NULL THEN s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER'
                 ELSE EXISTS (SELECT 1 FROM api_key k
                              WHERE k.client_id = s.client_id AND k.revoked_at IS NULL
                                AND k.scopes && ARRAY['events:read', 'objects:write']::text[]) END
      ORDER BY s.id`,
);
