import { randomUUID } from "node:crypto";
import type { SqlExecutor } from "../../db/database";
import { claimProposals } from "../sql/proposals-claim.sql";
import { fillProposals } from "../sql/proposals-fill.sql";
import { type AnsweredSubscription, recordProposal } from "../sql/proposal-record.sql";
import { proposalUnanswered } from "../sql/proposal-unanswered.sql";
import { awbOfObjectId } from "../uris";
import type { AcceptedSubscription } from "./proposal-answer";
import { notificationsUrlOf } from "../partners/notification-endpoint";

/** A proposal this instance holds a lease on. */
export interface ClaimedProposal {
  readonly id: string;
  /** The partner's Organization id. */
  readonly partner: string;
  readonly topicType: string;
  /** The object's local id ("shipment-020-12345675"). */
  readonly topic: string;
  readonly attemptCount: number;
  /** The claim's lease end, as stored: the fence of its writes. */
  readonly lease: Date;
  readonly serverUrl: string;
  readonly clientId: string | null;
}

/** The proposal loop's statements (src/onerecord/sql/proposal*), on the raw driver. */
export function createProposalStore(sql: Pick<SqlExecutor, "query" | "script">) {
  return {
    /** Adds the proposals of partners' followed AWBs not proposed yet (at most `limit`); answers how many. */
    async fill(limit: number): Promise<number> {
      const [row] = await fillProposals.rows(sql, { limit });
      return row?.added ?? 0;
    },

    async claim(limit: number, leaseMs: number): Promise<ClaimedProposal[]> {
      const rows = await claimProposals.rows(sql, { limit, leaseMs });
      return rows.map((row) => ({
        id: row.id,
        partner: row.partner,
        topicType: row.topic_type,
        topic: row.topic,
        attemptCount: row.attempt_count,
        lease: new Date(row.lease_until),
        serverUrl: row.server_url,
        clientId: row.client_id,
      }));
    },

    /**
     * DONE, with the first subscription answered recorded as an accepted publisher-initiated
     * SubscriptionRequest that notifies `{server}/notifications` — none when the partner already holds
     * a live one to the topic (proposal-record.sql.ts); answers the ids recorded (none or one), or
     * undefined when the lease was lost (nothing written).
     */
    async answered(
      proposal: ClaimedProposal,
      subscriptions: readonly AcceptedSubscription[],
    ): Promise<string[] | undefined> {
      // The proposal is for one topic: one subscription to it is what POST /subscriptions would take.
      const rows: AnsweredSubscription[] = subscriptions.slice(0, 1).map((s) => ({
        id: randomUUID(),
        subscription: s.node,
        eventTypes: s.eventTypes,
        expiresAt: s.expiresAt?.toISOString() ?? null,
        sendBody: s.sendBody,
        notifyStatusChange: s.notifyStatusChange,
      }));
      const endpoint = notificationsUrlOf(proposal.serverUrl);
      const [, result] = (await recordProposal.run(sql, {
        id: proposal.id,
        lease: proposal.lease.toISOString(),
        subscriptions: JSON.stringify(rows),
        partner: proposal.partner,
        topicType: proposal.topicType,
        topic: proposal.topic,
        awb: awbOfObjectId(proposal.topic) ?? null,
        endpoint,
        origin: new URL(endpoint).origin,
        clientId: proposal.clientId,
      })) as [unknown, Array<{ done: number; recorded: number }>];
      const [row] = result;
      if (row?.done !== 1) return undefined;
      return row.recorded === 1 ? rows.map((r) => r.id) : [];
    },

    /** PENDING again after `delayMs`, or FAILED for good; false when the lease was lost (nothing written). */
    async unanswered(
      proposal: ClaimedProposal,
      outcome: { status: "PENDING" | "FAILED"; delayMs: number; error: string },
    ): Promise<boolean> {
      const rows = await proposalUnanswered.rows(sql, {
        id: proposal.id,
        lease: proposal.lease.toISOString(),
        ...outcome,
        delayMs: Math.round(outcome.delayMs),
      });
      return rows.length > 0;
    },
  };
}

export type ProposalStore = ReturnType<typeof createProposalStore>;
