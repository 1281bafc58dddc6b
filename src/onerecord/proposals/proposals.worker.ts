import type { Logger } from "pino";
import type { ProposalAnswer, ProposalQuestion } from "./partner-client";
import type { AcceptedSubscription } from "./proposal-answer";
import type { ClaimedProposal } from "./proposals.store";

/** What became of one proposal in a run (counted in gateway_onerecord_proposals_total). */
export type ProposalOutcome = "subscribed" | "declined" | "failed" | "retry" | "lost";

export interface ProposalWorkerOptions {
  /** Between runs; 0: no timer (runOnce only). */
  intervalMs: number;
  /** Proposals claimed (and asked at once) per batch. */
  batchSize: number;
  /** How long a claim holds a proposal: longer than one question (token and GET) takes. */
  leaseMs: number;
  /** The delay before asking again after the n-th unanswered attempt (1, 2, …). */
  retryDelayMs: (attempts: number) => number;
  /** proposals.store.ts, partner-client.ts, and the topic's URI (uris.ts, known once the server listens). */
  fill: (limit: number) => Promise<number>;
  claim: (limit: number, leaseMs: number) => Promise<ClaimedProposal[]>;
  ask: (question: ProposalQuestion) => Promise<ProposalAnswer>;
  answered: (
    proposal: ClaimedProposal,
    subscriptions: readonly AcceptedSubscription[],
  ) => Promise<string[] | undefined>;
  unanswered: (
    proposal: ClaimedProposal,
    outcome: { status: "PENDING" | "FAILED"; delayMs: number; error: string },
  ) => Promise<boolean>;
  questionOf: (proposal: ClaimedProposal) => ProposalQuestion;
  onOutcome?: (outcome: ProposalOutcome) => void;
  log: Pick<Logger, "info" | "warn">;
}

export interface ProposalWorker {
  /** One run now (what the timer does): the to-do filled, then due proposals asked, batch by batch. */
  runOnce(): Promise<Record<ProposalOutcome, number>>;
  /** Stops the timer and waits for a run in progress to end its current batch. */
  stop(): Promise<void>;
}

/** New proposals added per run at most: the rest come at the next run. */
const FILL_LIMIT = 1_000;
/** The reason kept in last_error, at most this long. */
const MAX_ERROR = 500;

/**
 * The publisher-initiated subscriptions loop (docs/ONE-RECORD.md "Publisher-initiated
 * subscriptions"): every `intervalMs`, adds the proposals to make, then claims due ones with a lease
 * and asks each partner's GET /subscriptions; an answer is recorded (DONE, with the subscriptions it
 * gave, or FAILED when refused), no answer is asked again after `retryDelayMs`. Every write names the
 * claim's lease, so a proposal whose lease ran out and was claimed again is written by its new holder
 * only. Every instance runs one; SKIP LOCKED and the lease let them share the work.
 */
export function startProposalWorker(options: ProposalWorkerOptions): ProposalWorker {
  const { batchSize, leaseMs, log } = options;
  let stopped = false;
  let running: Promise<Record<ProposalOutcome, number>> | undefined;
  let timer: NodeJS.Timeout | undefined;

  async function handle(proposal: ClaimedProposal): Promise<ProposalOutcome> {
    const question = options.questionOf(proposal);
    const answer = await options.ask(question);
    const attempts = proposal.attemptCount + 1;
    const context = { partner: proposal.partner, topic: question.topic, proposal: proposal.id };
    switch (answer.kind) {
      case "subscribed": {
        const ids = await options.answered(proposal, answer.subscriptions);
        if (ids === undefined) return "lost";
        log.info({ ...context, subscriptionRequests: ids }, "ONE Record partner subscribed to a proposed topic");
        if (answer.refused.length > 0)
          log.warn({ ...context, refused: answer.refused }, "ONE Record partner answered subscriptions not taken");
        return "subscribed";
      }
      case "declined": {
        if ((await options.answered(proposal, [])) === undefined) return "lost";
        log.info({ ...context, reason: answer.reason }, "ONE Record partner wants no subscription to a proposed topic");
        return "declined";
      }
      case "refused": {
        const error = answer.reason.slice(0, MAX_ERROR);
        if (!(await options.unanswered(proposal, { status: "FAILED", delayMs: 0, error }))) return "lost";
        log.warn({ ...context, reason: error }, "ONE Record subscription proposal failed: not asked again");
        return "failed";
      }
      case "unavailable": {
        const delayMs = Math.max(options.retryDelayMs(attempts), answer.retryAfterMs ?? 0);
        const error = answer.reason.slice(0, MAX_ERROR);
        if (!(await options.unanswered(proposal, { status: "PENDING", delayMs, error }))) return "lost";
        log.warn(
          { ...context, reason: error, attempts, retryInMs: delayMs },
          "ONE Record partner did not answer a proposal",
        );
        return "retry";
      }
    }
  }

  async function run(): Promise<Record<ProposalOutcome, number>> {
    const counts: Record<ProposalOutcome, number> = { subscribed: 0, declined: 0, failed: 0, retry: 0, lost: 0 };
    await options.fill(FILL_LIMIT);
    while (!stopped) {
      const batch = await options.claim(batchSize, leaseMs);
      const outcomes = await Promise.all(
        batch.map((proposal) =>
          handle(proposal).catch((error: unknown) => {
            // A write that failed (the database): the lease runs out and another run asks again.
            log.warn({ err: error, proposal: proposal.id }, "ONE Record subscription proposal not recorded");
            return "lost" as const;
          }),
        ),
      );
      for (const outcome of outcomes) {
        counts[outcome]++;
        options.onOutcome?.(outcome);
      }
      if (batch.length < batchSize) break;
    }
    return counts;
  }

  function runOnce() {
    running ??= run().finally(() => (running = undefined));
    return running;
  }

  function schedule() {
    if (stopped || options.intervalMs <= 0) return;
    timer = setTimeout(() => {
      void runOnce()
        .catch((error: unknown) =>
          log.warn({ err: error }, "ONE Record proposal run failed; trying again at the next one"),
        )
        .finally(schedule);
    }, options.intervalMs);
    timer.unref();
  }
  schedule();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running?.catch(() => {});
    },
  };
}

/** Doubling from `baseMs` after each unanswered attempt, at most `maxMs`. */
export function doublingDelay(baseMs: number, maxMs: number): (attempts: number) => number {
  return (attempts) => Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 30));
}
