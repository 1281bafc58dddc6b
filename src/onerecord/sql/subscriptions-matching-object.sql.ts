import { param, sql, statement } from "../../db/sql-statement";
import { GRANT_IS_ACTIVE } from "./readers-of.sql";
import {
  MATCHING_SUBSCRIPTION_COLUMNS,
  type MatchingSubscriptionRow,
  SUBSCRIPTION_ACTIVE,
} from "./subscription-matching-columns";

/**
 * The active subscriptions to one logistics object that is no AWB's (`objectId`, an identifier
 * topic) or to one of its classes (`classes`, type topics) that take `eventType`, and whose
 * subscriber may read it now: its creator (`createdBy`), or an Organization holding a grant on it
 * that has not expired (access-policy.ts canRead).
 */
export const subscriptionsMatchingObject = statement<
  { objectId: string; classes: string[]; eventType: string; createdBy: string },
  MatchingSubscriptionRow
>(
  "onerecord/subscriptions-matching-object",
  sql`SELECT ${MATCHING_SUBSCRIPTION_COLUMNS}
      FROM onerecord_subscription s
      WHERE ((s.topic_type = 'LOGISTICS_OBJECT_IDENTIFIER' AND s.topic = ${param("objectId")})
          OR (s.topic_type = 'LOGISTICS_OBJECT_TYPE' AND s.topic = ANY(${param("classes")}::text[])))
        AND ${param("eventType")} = ANY(s.event_types)
        AND ${SUBSCRIPTION_ACTIVE}
        AND (s.subscriber = ${param("createdBy")}
             OR EXISTS (SELECT 1 FROM logistics_object_grant g
                        WHERE g.object_id = ${param("objectId")} AND g.organization_id = s.subscriber
                          AND ${GRANT_IS_ACTIVE}))
      ORDER BY s.id`,
);
