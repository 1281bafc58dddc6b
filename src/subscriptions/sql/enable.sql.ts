import { param, script, sql } from "../../db/sql-statement";
import { COLUMNS } from "./subscription-columns";

const TARGET = sql`id = ${param("id")}::uuid AND client_id = ${param("clientId")}::uuid`;

/**
 * Enables the client's subscription `id` again (clears disabled_at, its reason and the failing clock;
 * statement 2 answers the row) and makes its parked notifications due at once. The row is locked FOR
 * UPDATE first, which waits for every statement parking a delivery of it to commit (they read it
 * under a key-share lock, delivery/sql/subscription-disabled.ts) and keeps new ones waiting until
 * this commits; the last statement then reads every delivery they parked.
 */
export const enable = script<{ id: string; clientId: string }>(
  "subscriptions/enable",
  sql`SELECT 1 FROM subscription WHERE ${TARGET} FOR UPDATE;
UPDATE subscription SET
  updated_at = CASE WHEN disabled_at IS NULL THEN updated_at ELSE clock_timestamp() END,
  disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
WHERE ${TARGET}
RETURNING ${COLUMNS};
UPDATE delivery SET status = 'PENDING', next_attempt_at = now()
WHERE status = 'PARKED' AND subscription_id IN (SELECT id FROM subscription WHERE ${TARGET})`,
);
