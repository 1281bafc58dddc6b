import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, LIVE, type SubscriptionRow } from "./subscription-columns";

/**
 * Replaces the client's live subscription `id` when its callback stays `callback`; otherwise writes
 * nothing. Always one row: the current callback (null: no such subscription), the id of another
 * live subscription holding (awb, callback) if any, and the row's columns when updated.
 */
export const updateKeepingCallback = statement<
  { id: string; clientId: string; awb: string; callback: string; states: string[]; expiresAt: string | null },
  { current: string | null; existing: string | null } & Partial<SubscriptionRow>
>(
  "subscriptions/update-keeping-callback",
  sql`WITH target AS (
        SELECT callback FROM subscription WHERE id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid AND ${LIVE}
      ), taken AS (
        SELECT id FROM subscription
        WHERE client_id = ${param("clientId")}::uuid AND awb = ${param("awb")} AND callback = ${param("callback")}
          AND id <> ${param("id")}::uuid AND ${LIVE}
      ), updated AS (
        UPDATE subscription SET awb = ${param("awb")}, states = ${param("states")}::text[],
          expires_at = ${param("expiresAt")}::timestamptz, updated_at = clock_timestamp()
        WHERE id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid AND callback = ${param("callback")}
          AND ${LIVE} AND NOT EXISTS (SELECT 1 FROM taken)
        RETURNING ${COLUMNS}
      )
      SELECT (SELECT callback FROM target) AS current, (SELECT id::text FROM taken) AS existing, updated.*
      FROM (SELECT 1) AS one LEFT JOIN updated ON true`,
);
