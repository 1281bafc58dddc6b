import { param, sql, statement } from "../../db/sql-statement";

/**
 * A partner registered again on another server (partner:add): what is queued for it moves there, run
 * in the transaction that re-registers it. Its live subscriptions (subscriber = its Organization,
 * pending or accepted, expired ones included: their queued notifications are still sent) notify
 * `newEndpoint` from now on, and their PENDING and PARKED deliveries go there too. Its notifications
 * queued under no subscription (status notifications, LOGISTICS_OBJECT_AVAILABLE announcements: kind
 * ONE_RECORD, no subscription) are known only by their callback, `oldEndpoint`: they move unless
 * another registered partner is on the old server (then they may be that partner's, and stay).
 * A delivery being sent as this runs still goes where its claim read; a failure retries at the new
 * endpoint.
 */
export const movePartnerNotifications = statement<
  { organization: string; oldEndpoint: string; newEndpoint: string; newOrigin: string },
  { subscriptions: number; deliveries: number; unsubscribed: number }
>(
  "onerecord/partner-move",
  sql`WITH live AS (
        SELECT id FROM onerecord_subscription
        WHERE subscriber = ${param("organization")} AND status IN ('REQUEST_PENDING', 'REQUEST_ACCEPTED')
      ), moved AS (
        UPDATE onerecord_subscription SET endpoint = ${param("newEndpoint")}, origin = ${param("newOrigin")}
        WHERE id IN (SELECT id FROM live)
          AND (endpoint <> ${param("newEndpoint")} OR origin <> ${param("newOrigin")})
        RETURNING 1
      ), subscribed AS (
        UPDATE delivery SET callback = ${param("newEndpoint")}, origin = ${param("newOrigin")}
        WHERE kind = 'ONE_RECORD' AND status IN ('PENDING', 'PARKED')
          AND onerecord_subscription_id IN (SELECT id FROM live)
          AND (callback <> ${param("newEndpoint")} OR origin <> ${param("newOrigin")})
        RETURNING 1
      ), unsubscribed AS (
        UPDATE delivery SET callback = ${param("newEndpoint")}, origin = ${param("newOrigin")}
        WHERE kind = 'ONE_RECORD' AND status IN ('PENDING', 'PARKED') AND onerecord_subscription_id IS NULL
          AND callback = ${param("oldEndpoint")}
          AND NOT EXISTS (SELECT 1 FROM onerecord_partner p
                          WHERE p.organization <> ${param("organization")}
                            AND rtrim(p.server_url, '/') || '/notifications' = ${param("oldEndpoint")})
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM moved)::int AS subscriptions, (SELECT count(*) FROM subscribed)::int AS deliveries,
             (SELECT count(*) FROM unsubscribed)::int AS unsubscribed`,
);
