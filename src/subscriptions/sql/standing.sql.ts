import { param, sql, statement } from "../../db/sql-statement";
import { LIVE } from "./subscription-columns";

/** The client's live subscription of (awb, callback) if any, and how many live ones it has. */
export const standing = statement<
  { clientId: string; awb: string; callback: string },
  { existing: string | null; count: number }
>(
  "subscriptions/standing",
  sql`SELECT (SELECT id::text FROM subscription
              WHERE client_id = ${param("clientId")}::uuid AND awb = ${param("awb")} AND callback = ${param("callback")}
                AND ${LIVE}) AS existing,
             (SELECT count(*)::int FROM subscription WHERE client_id = ${param("clientId")}::uuid AND ${LIVE}) AS count`,
);
