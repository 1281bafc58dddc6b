import { param, sql, statement } from "../../db/sql-statement";

/**
 * A proposal not answered this time: PENDING again, next asked after `delayMs` (the partner failed
 * or was unreachable), or FAILED for good (it refused); either way with the reason, and only while
 * this claim's lease (`lease`) is the proposal's. Answers the row it wrote (none: the lease was lost).
 */
export const proposalUnanswered = statement<
  { id: string; lease: string; status: "PENDING" | "FAILED"; delayMs: number; error: string },
  { id: string }
>(
  "onerecord/proposal-unanswered",
  sql`UPDATE onerecord_proposal
      SET status = ${param("status")}, attempt_count = attempt_count + 1, lease_until = NULL,
          next_attempt_at = now() + ${param("delayMs")}::int * interval '1 millisecond', last_error = ${param("error")}
      WHERE id = ${param("id")}::uuid AND lease_until = ${param("lease")}::timestamptz AND status = 'PENDING'
      RETURNING id`,
);
