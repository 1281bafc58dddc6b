import { param, sql, statement } from "../../db/sql-statement";
import { LIVE } from "./subscription-columns";

/** The client's live subscription of (awb, callback), if any. */
export const existing = statement<{ clientId: string; awb: string; callback: string }, { id: string }>(
  "subscriptions/existing",
  sql`SELECT id::text AS id FROM subscription
      WHERE client_id = ${param("clientId")}::uuid AND awb = ${param("awb")} AND callback = ${param("callback")} AND ${LIVE}`,
);
