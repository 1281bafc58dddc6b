import { sql, statement } from "../../db/sql-statement";

/** How many deliveries are pending, and when the longest-due of them came due. */
export const queueStats = statement<Record<never, never>, { pending: number; oldest: Date | null }>(
  "delivery/queue-stats",
  sql`SELECT count(*)::int AS pending, min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()) AS oldest
      FROM delivery WHERE status = 'PENDING'`,
);
