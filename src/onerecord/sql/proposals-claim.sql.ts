import { param, sql, statement } from "../../db/sql-statement";

export interface ClaimedProposalRow {
  id: string;
  partner: string;
  topic_type: string;
  topic: string;
  attempt_count: number;
  /** The lease's end: every later write of this claim names it, so a claim taken over writes nothing. */
  lease_until: Date;
  server_url: string;
  client_id: string | null;
}

/**
 * Claims up to `limit` due proposals (PENDING, their next attempt due, no lease running) of partners
 * that still ask for proposals, for `leaseMs`: SKIP LOCKED, so instances claiming at once take
 * different ones, and a lease, so no other claim takes one until it ends. A later claim's lease ends
 * after an earlier one's (it is taken only once that one ended), so `lease_until` fences each claim's
 * writes.
 */
export const claimProposals = statement<{ limit: number; leaseMs: number }, ClaimedProposalRow>(
  "onerecord/proposals-claim",
  sql`WITH due AS (
        SELECT pr.id
        FROM onerecord_proposal pr
        JOIN onerecord_partner p ON p.organization = pr.partner AND p.propose_subscriptions
        WHERE pr.status = 'PENDING' AND pr.next_attempt_at <= now()
          AND (pr.lease_until IS NULL OR pr.lease_until < now())
        ORDER BY pr.next_attempt_at, pr.id
        LIMIT ${param("limit")}
        FOR UPDATE OF pr SKIP LOCKED
      )
      UPDATE onerecord_proposal pr
      SET lease_until = now() + ${param("leaseMs")}::int * interval '1 millisecond'
      FROM due, onerecord_partner p
      WHERE pr.id = due.id AND p.organization = pr.partner
      RETURNING pr.id, pr.partner, pr.topic_type, pr.topic, pr.attempt_count, pr.lease_until, p.server_url, p.client_id`,
);
