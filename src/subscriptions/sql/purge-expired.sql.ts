import { param, script, sql } from "../../db/sql-statement";
import { LIVE } from "./subscription-columns";

const SAME = sql`client_id = ${param("clientId")}::uuid AND awb = ${param("awb")} AND callback = ${param("callback")}`;

/**
 * Two statements removing the client's expired subscription of (awb, callback), if any, so that a new
 * or updated one can take the pair; the second answers its id. Its notifications still queued are
 * not sent (as retention would mark them), nor handed to the new one: a delivery whose subscription
 * is gone would be sent. A send under way is fenced out (its lease token cleared).
 */
export const PURGE_EXPIRED = sql`UPDATE delivery SET status = 'DEAD', completed_at = now(),
    last_error = 'subscription expired before it was sent', lease_until = NULL, lease_token = NULL
  WHERE status IN ('PENDING', 'PARKED') AND subscription_id IN (SELECT id FROM subscription WHERE ${SAME} AND NOT ${LIVE});
DELETE FROM subscription WHERE ${SAME} AND NOT ${LIVE} RETURNING id`;

export const purgeExpired = script<{ clientId: string; awb: string; callback: string }>(
  "subscriptions/purge-expired",
  PURGE_EXPIRED,
);
