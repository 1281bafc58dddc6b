import { type SqlFragment, sql } from "../../db/sql-statement";

/**
 * Whether a subscriber may take one more live subscription (accepted, not expired; a disabled one is
 * live): none live to the same topic type and topic, whoever asked for it. For one it asked for
 * itself (`thirdParty` false), also fewer of its own live ones than its cap (the API client's
 * max_subscriptions when the subscriber is one, else `defaultCap`) and, for a type topic, fewer own
 * live type subscriptions than `typeCap`: what others asked for on its behalf (accepted_at set) does
 * not use up its own room; those are bounded per requester (liveThirdParties). Shared by the insert of
 * a request accepted on arrival and the holder's acceptance of a third party's, each run under the
 * subscriber's lock (subscriberLock).
 */
export function mayTakeLiveSubscription<Name extends string>(
  given: {
    subscriber: SqlFragment<Name>;
    topicType: SqlFragment<Name>;
    topic: SqlFragment<Name>;
  } & (
    | { thirdParty: true }
    | { thirdParty: false; clientId: SqlFragment<Name>; defaultCap: SqlFragment<Name>; typeCap: SqlFragment<Name> }
  ),
): SqlFragment<Name> {
  const live = sql<Name>`s.subscriber = ${given.subscriber} AND s.status = 'REQUEST_ACCEPTED'
                   AND (s.expires_at IS NULL OR s.expires_at > now())`;
  const unique = sql<Name>`NOT EXISTS (SELECT 1 FROM onerecord_subscription s
                 WHERE ${live} AND s.topic_type = ${given.topicType} AND s.topic = ${given.topic})`;
  if (given.thirdParty) return sql<Name>`(${unique})`;
  const own = sql<Name>`${live} AND s.accepted_at IS NULL`;
  return sql<Name>`(${unique}
            AND (${given.topicType} <> 'LOGISTICS_OBJECT_TYPE'
                 OR (SELECT count(*) FROM onerecord_subscription s
                     WHERE ${own} AND s.topic_type = 'LOGISTICS_OBJECT_TYPE') < ${given.typeCap}::int)
            AND (SELECT count(*) FROM onerecord_subscription s WHERE ${own})
                < coalesce((SELECT c.max_subscriptions FROM client c WHERE c.id = ${given.clientId}::uuid),
                           ${given.defaultCap}::int))`;
}

/**
 * How many live subscriptions for third parties (accepted by a holder: accepted_at is set) the
 * requester `requestedBy` holds.
 */
export function liveThirdParties<Name extends string>(requestedBy: SqlFragment<Name>): SqlFragment<Name> {
  return sql<Name>`(SELECT count(*) FROM onerecord_subscription s
                 WHERE s.requested_by = ${requestedBy} AND s.accepted_at IS NOT NULL AND s.status = 'REQUEST_ACCEPTED'
                   AND (s.expires_at IS NULL OR s.expires_at > now()))`;
}
