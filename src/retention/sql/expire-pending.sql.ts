import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { HELD_CALLBACK_PATTERN } from "../../delivery/held-callback";

/**
 * Marks dead (not sent) up to `limit` pending and parked deliveries of subscriptions that have
 * expired or that delivery disabled before `disabledBefore` (null: never); up to `limit` of ONE
 * Record subscriptions no longer accepted (revoked: claims skip them) or disabled as long (an expired
 * one's are still sent: they tell of what happened while it was valid); and up to `limit`
 * parked deliveries whose subscription was deleted (nothing will enable them), those held for an
 * Organization's server apart (delivery/held-callback.ts: registering the server releases them), which
 * end once held since before `disabledBefore`. Leased ones are left to
 * the next run. Their lease token is cleared: a holder that stalled past its lease is fenced out.
 */
export const expirePending = statement<{ limit: number; disabledBefore: string | null }>(
  "retention/expire-pending",
  sql`WITH doomed AS (
        SELECT d.id, CASE WHEN s.expires_at <= now() THEN 'subscription expired before it was sent'
                          ELSE 'subscription disabled for longer than RETENTION_DEAD_DAYS' END AS reason
        FROM delivery d JOIN subscription s ON s.id = d.subscription_id
        WHERE d.status IN ('PENDING', 'PARKED') AND (s.expires_at <= now() OR s.disabled_at < ${param("disabledBefore")}::timestamptz)
          AND (d.lease_until IS NULL OR d.lease_until < now())
        LIMIT ${param("limit")}::int FOR UPDATE OF d SKIP LOCKED
      ), doomed_onerecord AS (
        SELECT d.id, CASE WHEN o.status = 'REQUEST_REVOKED' THEN 'subscription revoked'
                          WHEN o.status <> 'REQUEST_ACCEPTED' THEN 'subscription not accepted'
                          ELSE 'subscription disabled for longer than RETENTION_DEAD_DAYS' END AS reason
        FROM delivery d JOIN onerecord_subscription o ON o.id = d.onerecord_subscription_id
        WHERE d.status IN ('PENDING', 'PARKED')
          AND (o.status <> 'REQUEST_ACCEPTED' OR o.disabled_at < ${param("disabledBefore")}::timestamptz)
          AND (d.lease_until IS NULL OR d.lease_until < now())
        LIMIT ${param("limit")}::int FOR UPDATE OF d SKIP LOCKED
      ), held_too_long AS (
        SELECT id, 'held longer than RETENTION_DEAD_DAYS: no server was registered for its Organization' AS reason
        FROM delivery
        WHERE status = 'PARKED' AND callback LIKE ${sqlText(`'${HELD_CALLBACK_PATTERN}'`)}
          AND created_at < ${param("disabledBefore")}::timestamptz
        LIMIT ${param("limit")}::int FOR UPDATE SKIP LOCKED
      ), orphaned AS (
        SELECT id, 'subscription deleted while disabled' AS reason FROM delivery
        WHERE status = 'PARKED' AND subscription_id IS NULL AND onerecord_subscription_id IS NULL
          AND callback NOT LIKE ${sqlText(`'${HELD_CALLBACK_PATTERN}'`)}
        LIMIT ${param("limit")}::int FOR UPDATE SKIP LOCKED
      )
      UPDATE delivery d SET status = 'DEAD', completed_at = now(), next_attempt_at = now(), last_error = x.reason,
        lease_until = NULL, lease_token = NULL
      FROM (SELECT * FROM doomed UNION ALL SELECT * FROM doomed_onerecord UNION ALL SELECT * FROM held_too_long
            UNION ALL SELECT * FROM orphaned) x
      WHERE d.id = x.id`,
);
