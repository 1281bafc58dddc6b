import { param, script, sql } from "../../db/sql-statement";
import { PURGE_EXPIRED } from "./purge-expired.sql";
import { COLUMNS, LIVE } from "./subscription-columns";

/**
 * The client's cap (CONTRACT §2) as one script: lock the client's row, remove an expired subscription
 * of the same AWB and callback (it no longer counts: the new one takes its place), then count and
 * insert (statement 4: the count, with the row when inserted). Not one statement: a statement reads
 * what had committed when it started, so a lock taken inside the statement that counts would wait for
 * a concurrent create and then count without that create's row (both admitted at cap − 1). In a
 * script the count starts once the lock is held, and the lock lasts until the script's implicit
 * transaction ends. FOR NO KEY UPDATE does not block the key-share locks that inserts referencing the
 * client take.
 */
export const insertWithinCap = script<{
  id: string;
  clientId: string;
  awb: string;
  callback: string;
  states: string[];
  expiresAt: string | null;
  cap: number;
}>(
  "subscriptions/insert-within-cap",
  sql`SELECT 1 FROM client WHERE id = ${param("clientId")}::uuid FOR NO KEY UPDATE;
${PURGE_EXPIRED};
WITH counted AS (SELECT count(*)::int AS n FROM subscription WHERE client_id = ${param("clientId")}::uuid AND ${LIVE}),
     stamp AS (SELECT clock_timestamp() AS at),
     inserted AS (
       INSERT INTO subscription (id, client_id, awb, callback, states, created_at, updated_at, expires_at)
       SELECT ${param("id")}::uuid, ${param("clientId")}::uuid, ${param("awb")}, ${param("callback")},
              ${param("states")}::text[], stamp.at, stamp.at, ${param("expiresAt")}::timestamptz
       FROM counted, stamp WHERE counted.n < ${param("cap")}
       ON CONFLICT (client_id, awb, callback) DO NOTHING
       RETURNING ${COLUMNS}
     )
SELECT counted.n AS count, inserted.* FROM counted LEFT JOIN inserted ON true`,
);
