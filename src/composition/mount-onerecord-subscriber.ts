import type { FastifyInstance } from "fastify";
import type { OneRecordSettings } from "../config";
import type { TokenClient } from "../outbound/token-client";
import { organizationUriOf } from "../onerecord/identity/organizations";
import { createNotificationsInMetrics } from "../onerecord/notifications-in/notifications-in.metrics";
import { registerSubscriberRoutes } from "../onerecord/notifications-in/notifications-in.routes";
import { createNotificationsIn } from "../onerecord/notifications-in/notifications-in.service";
import { createSubscriptionWishes } from "../onerecord/notifications-in/subscription-wishes";
import { createPartnerClient } from "../onerecord/proposals/partner-client";
import { createProposalMetrics } from "../onerecord/proposals/proposals.metrics";
import { createProposalStore } from "../onerecord/proposals/proposals.store";
import { doublingDelay, type ProposalWorker, startProposalWorker } from "../onerecord/proposals/proposals.worker";
import type { OneRecordUris } from "../onerecord/uris";
import type { Core } from "./build-services";

/** Proposals asked at once per batch. */
const PROPOSAL_BATCH = 10;
/** A claim's lease: more than a question's token request (5 s) and GET (10 s). */
const PROPOSAL_LEASE_MS = 60_000;
/** An unanswered proposal is asked again after 30 s, 1 min, 2 min, … at most an hour. */
const PROPOSAL_RETRY = doublingDelay(30_000, 3_600_000);

/**
 * The gateway as a ONE Record subscriber (docs/ONE-RECORD.md "Receiving notifications",
 * "Publisher-initiated subscriptions"): the routes of POST /notifications and GET /subscriptions (for
 * the plugin's `moreRoutes`), and the proposal loop, which starts once the server listens (the topics'
 * URIs need its URL) and stops when it closes (Fastify's onClose, within the disposer stack's "http").
 */
export function mountOneRecordSubscriber(
  http: FastifyInstance,
  core: Pick<Core, "database" | "metrics" | "callbackAgent" | "oneRecordPartnerServers" | "tableUpkeep">,
  uris: OneRecordUris,
  tokens: TokenClient | undefined,
  settings: Pick<OneRecordSettings, "proposalIntervalMs" | "notificationQuota" | "subscribeTo">,
): (scope: FastifyInstance) => void {
  // How often this instance fills and asks the proposals' to-do (ONE_RECORD_PROPOSAL_INTERVAL_MS); 0: never.
  const { proposalIntervalMs } = settings;
  const received = createNotificationsInMetrics(core.metrics.registry);
  // A server checkpoints its own log; the embedded database's is checkpointed by the table upkeep only.
  const upkeep = core.database.kind === "pglite" ? core.tableUpkeep : undefined;
  const notificationsIn = createNotificationsIn({
    sql: core.database.sql,
    quota: settings.notificationQuota,
    onStored: (eventType, bytes) => {
      received.received(eventType);
      // Counted as rows of a KiB each: the log is checkpointed every EMBEDDED_VACUUM_ROWS KiB received
      // (20 MiB by default), and its segments are reused instead of piling up.
      upkeep?.changed(Math.ceil(bytes / 1024));
    },
    log: http.log,
  });
  const wishes = createSubscriptionWishes(core.database.prisma);

  const proposalMetrics = createProposalMetrics(core.metrics.registry);
  const store = createProposalStore(core.database.sql);
  const partners = createPartnerClient({ dispatcher: core.callbackAgent, tokens });
  let proposals: ProposalWorker | undefined;
  http.addHook("onListen", async () => {
    proposals ??= startProposalWorker({
      intervalMs: proposalIntervalMs,
      batchSize: PROPOSAL_BATCH,
      leaseMs: PROPOSAL_LEASE_MS,
      retryDelayMs: PROPOSAL_RETRY,
      fill: (limit) => store.fill(limit),
      claim: (limit, leaseMs) => store.claim(limit, leaseMs),
      // With the audience of the partner's tokens, as its notifications are sent.
      ask: async (question) =>
        partners.ask({
          ...question,
          audience: (await core.oneRecordPartnerServers.partnerOf(question.serverUrl))?.audience ?? undefined,
        }),
      answered: (proposal, subscriptions) => store.answered(proposal, subscriptions),
      unanswered: (proposal, outcome) => store.unanswered(proposal, outcome),
      questionOf: (proposal) => ({
        serverUrl: proposal.serverUrl,
        topic: uris.objectUri(proposal.topic),
        partnerUri: organizationUriOf(proposal.partner, (id) => uris.objectUri(id)),
      }),
      onOutcome: (outcome) => proposalMetrics.outcome(outcome),
      log: http.log,
    });
  });
  http.addHook("onClose", async () => {
    await proposals?.stop();
  });

  return (scope) =>
    registerSubscriberRoutes(scope, {
      notificationsIn,
      wishes,
      uris,
      anyTopic: settings.subscribeTo === "any",
    });
}
