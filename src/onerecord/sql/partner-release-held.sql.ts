import { param, sql, sqlText, statement } from "../../db/sql-statement";
import { DELIVERY_CHANNEL } from "../../delivery/sql/queue-deliveries.sql";

/**
 * A partner registered for an Organization whose notifications were held (no operator had said where
 * it receives them: partners/notification-endpoint.ts heldEndpointOf), run in the transaction that
 * registers it: its subscriptions notify `newEndpoint` from now on, and what was queued for it at the
 * held endpoint (parked, or pending should an operator have requeued it) becomes due there at once
 * (the workers are told at commit).
 */
export const releaseHeldNotifications = statement<
  { organization: string; heldEndpoint: string; newEndpoint: string; newOrigin: string },
  { subscriptions: number; deliveries: number; told: number }
>(
  "onerecord/partner-release-held",
  sql`WITH moved AS (
        UPDATE onerecord_subscription SET endpoint = ${param("newEndpoint")}, origin = ${param("newOrigin")}
        WHERE subscriber = ${param("organization")} AND endpoint = ${param("heldEndpoint")}
        RETURNING 1
      ), released AS (
        UPDATE delivery SET callback = ${param("newEndpoint")}, origin = ${param("newOrigin")}, status = 'PENDING',
          next_attempt_at = now(), last_error = NULL
        WHERE kind = 'ONE_RECORD' AND status IN ('PARKED', 'PENDING') AND callback = ${param("heldEndpoint")}
          AND (lease_until IS NULL OR lease_until < now())
        RETURNING 1
      ), told AS (
        SELECT pg_notify('${sqlText(DELIVERY_CHANNEL)}', '') FROM (SELECT count(*) AS n FROM released) r WHERE r.n > 0
      )
      SELECT (SELECT count(*) FROM moved)::int AS subscriptions, (SELECT count(*) FROM released)::int AS deliveries,
             (SELECT count(*) FROM told)::int AS told`,
);
