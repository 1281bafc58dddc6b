import { param, sql, statement } from "../../db/sql-statement";

type Batch = { before: string; limit: number };

/*
 * ONE Record's kinds, one batch each as in prune-batch.sql.ts: at most `limit` rows older than
 * `before`, locked SKIP LOCKED, one statement (so one short transaction) per batch.
 */

/**
 * Notifications other servers POSTed here (POST {base}/notifications), received before `before`. The
 * (sender, Notification-Id) dedupe goes with them: a sender repeating one older than that is stored again.
 */
export const pruneNotificationsReceived = statement<Batch>(
  "retention/prune-onerecord-notifications-received",
  sql`WITH doomed AS (
        SELECT id FROM onerecord_notification_received WHERE received_at < ${param("before")}::timestamptz
        LIMIT ${param("limit")}::int FOR UPDATE SKIP LOCKED)
      DELETE FROM onerecord_notification_received t USING doomed WHERE t.id = doomed.id`,
);

/**
 * SubscriptionRequests that ended before `before` — revoked, rejected or failed then (`decided_at`), or
 * expired then — **and with no delivery left**: their notifications go first, by their own ages
 * (delivered and dead deliveries; a revoked one's queued notifications are marked dead, an expired one's
 * are still sent and kept until then), so no delivery ever loses its subscription to retention and none
 * still to be sent is touched. Nothing queues a delivery for a subscription that has ended (it is
 * immutable: its status never goes back to accepted), and a redelivery refuses one of a subscription no
 * longer accepted.
 */
export const pruneOneRecordSubscriptions = statement<Batch>(
  "retention/prune-onerecord-subscriptions",
  sql`WITH doomed AS (
        SELECT o.id FROM onerecord_subscription o
        WHERE ((o.status IN ('REQUEST_REVOKED', 'REQUEST_REJECTED', 'REQUEST_FAILED')
                AND coalesce(o.decided_at, o.requested_at) < ${param("before")}::timestamptz)
               OR o.expires_at < ${param("before")}::timestamptz)
          AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.onerecord_subscription_id = o.id)
        LIMIT ${param("limit")}::int FOR UPDATE OF o SKIP LOCKED)
      DELETE FROM onerecord_subscription t USING doomed WHERE t.id = doomed.id`,
);

/**
 * Answered proposals (DONE or FAILED; a PENDING one is still to be asked) made before `before` that
 * are no longer wanted and left nothing standing: no partner registered under that Organization whose
 * API client follows the AWB through an unexpired legacy subscription (the partner removed, or the
 * legacy subscription deleted or expired), and no accepted, unexpired publisher-initiated subscription
 * of that partner to that topic (what the answer recorded, or a later one). Kept otherwise, since the
 * to-do proposes a (partner, topic) only while no proposal of it exists: deleting a wanted one would ask
 * the partner again, and deleting one whose subscription stands would let a renewed legacy subscription
 * propose a second, notifying the partner of each milestone twice. The topic is the AWB's Shipment
 * ("shipment-<awb>", as proposals-fill.sql.ts makes it).
 */
export const pruneProposals = statement<Batch>(
  "retention/prune-onerecord-proposals",
  sql`WITH doomed AS (
        SELECT pr.id FROM onerecord_proposal pr
        WHERE pr.status IN ('DONE', 'FAILED') AND pr.created_at < ${param("before")}::timestamptz
          AND NOT EXISTS (
            SELECT 1 FROM onerecord_partner p JOIN subscription s ON s.client_id = p.client_id
            WHERE p.organization = pr.partner AND pr.topic LIKE 'shipment-%'
              AND s.awb = substr(pr.topic, length('shipment-') + 1)
              AND (s.expires_at IS NULL OR s.expires_at > now()))
          AND NOT EXISTS (
            SELECT 1 FROM onerecord_subscription o
            WHERE o.initiated_by = 'PUBLISHER' AND o.subscriber = pr.partner
              AND o.topic_type = pr.topic_type AND o.topic = pr.topic
              AND o.status = 'REQUEST_ACCEPTED' AND (o.expires_at IS NULL OR o.expires_at > now()))
        LIMIT ${param("limit")}::int FOR UPDATE OF pr SKIP LOCKED)
      DELETE FROM onerecord_proposal t USING doomed WHERE t.id = doomed.id`,
);

/**
 * Access delegations that ended before `before` — revoked, rejected or failed then (`decided_at`), or
 * expired then — **and holding no grant**: a grant (logistics_object_grant.delegation_id) keeps its
 * delegation, which says why the grant exists and what revoking it removes. Revocation deletes a
 * delegation's grants, and a rejected one never had any; an expired one's grants grant nothing but are
 * kept with it.
 */
export const pruneAccessDelegations = statement<Batch>(
  "retention/prune-onerecord-access-delegations",
  sql`WITH doomed AS (
        SELECT a.id FROM onerecord_access_delegation a
        WHERE ((a.status IN ('REQUEST_REVOKED', 'REQUEST_REJECTED', 'REQUEST_FAILED')
                AND coalesce(a.decided_at, a.requested_at) < ${param("before")}::timestamptz)
               OR a.expires_at < ${param("before")}::timestamptz)
          AND NOT EXISTS (SELECT 1 FROM logistics_object_grant g WHERE g.delegation_id = a.id)
        LIMIT ${param("limit")}::int FOR UPDATE OF a SKIP LOCKED)
      DELETE FROM onerecord_access_delegation t USING doomed WHERE t.id = doomed.id`,
);
