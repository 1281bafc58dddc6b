import { param, sql, statement } from "../../db/sql-statement";

/**
 * Removes a registered partner and, in the same statement, ends the ONE Record notifications still
 * queued for its server: PENDING and PARKED deliveries of kind ONE_RECORD whose callback is its
 * `{server}/notifications` become DEAD ("partner removed", lease token cleared, so a send under way
 * records nothing when it ends) — unless another registered partner is on that server (they may be
 * its). ONE Record notifications never go DEAD by the retry schedule: without this, those queued
 * under no subscription would be retried for ever. `removed` 0: no such partner, nothing ended.
 */
export const removePartner = statement<{ organization: string }, { removed: number; deliveries_ended: number }>(
  "onerecord/partner-remove",
  sql`WITH removed AS (
        DELETE FROM onerecord_partner WHERE organization = ${param("organization")}
        RETURNING rtrim(server_url, '/') || '/notifications' AS endpoint
      ), ended AS (
        UPDATE delivery SET status = 'DEAD', completed_at = now(), last_error = 'partner removed',
          lease_until = NULL, lease_token = NULL
        WHERE kind = 'ONE_RECORD' AND status IN ('PENDING', 'PARKED')
          AND callback IN (SELECT endpoint FROM removed)
          AND NOT EXISTS (SELECT 1 FROM onerecord_partner p
                          WHERE p.organization <> ${param("organization")}
                            AND rtrim(p.server_url, '/') || '/notifications' = delivery.callback)
        RETURNING 1
      )
      SELECT (SELECT count(*) FROM removed)::int AS removed, (SELECT count(*) FROM ended)::int AS deliveries_ended`,
);
