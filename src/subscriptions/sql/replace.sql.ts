import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, LIVE, type SubscriptionRow } from "./subscription-columns";

/** Replaces every field of the client's live subscription `id`, the callback included. */
export const replace = statement<
  { id: string; clientId: string; awb: string; callback: string; states: string[]; expiresAt: string | null },
  SubscriptionRow
>(
  "subscriptions/replace",
  sql`UPDATE subscription SET awb = ${param("awb")}, callback = ${param("callback")}, states = ${param("states")}::text[],
        expires_at = ${param("expiresAt")}::timestamptz, updated_at = clock_timestamp()
      WHERE id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid AND ${LIVE}
      RETURNING ${COLUMNS}`,
);
