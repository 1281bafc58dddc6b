import { param, sql, statement } from "../../db/sql-statement";

/**
 * Moves up to `limit` due, unclaimed deliveries of `origin` `byMs` into the future, so that claims
 * for other origins do not scan past them while this origin can take no more.
 */
export const deferOrigin = statement<{ origin: string; byMs: number; limit: number }, { n: number }>(
  "delivery/defer-origin",
  sql`WITH moved AS (
       UPDATE delivery SET next_attempt_at = now() + (${param("byMs")}::int * interval '1 millisecond')
       WHERE id IN (SELECT id FROM delivery
                    WHERE status = 'PENDING' AND origin = ${param("origin")} AND next_attempt_at <= now()
                      AND (lease_until IS NULL OR lease_until < now())
                    ORDER BY next_attempt_at LIMIT ${param("limit")} FOR UPDATE SKIP LOCKED)
       RETURNING 1
     ) SELECT count(*)::int AS n FROM moved`,
);
