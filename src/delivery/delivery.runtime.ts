import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { SigningSecretStore } from "../clients/signing-secret-store";
import type { Config } from "../config";
import { listenForNotifications, type NotificationListener } from "../db/notifications";
import { createTokenClient, type TokenClient } from "../outbound/token-client";
import type { DeliveryMetrics } from "./delivery.metrics";
import { DELIVERY_CHANNEL, type DeliveryStore } from "./delivery.store";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.worker";
import { type PartnerOfUrl, sendOneRecordNotification } from "./onerecord-sender";
import { sendNotification } from "./sender";

export interface RunningDeliveryWorker extends DeliveryWorker {
  /** "listening" when woken by PostgreSQL NOTIFY, "not used" on the embedded database (one process). */
  wakeups(): "listening" | "reconnecting" | "not used";
}

/**
 * The worker wired to the real store, HTTP client, signing secrets and ONE Record token client (used
 * by the server and `npm run worker`). It wakes on the in-process `wake()` after a local commit, on
 * PostgreSQL NOTIFY for commits made by other processes, and otherwise polls every DELIVERY_POLL_MS.
 * Webhooks are signed (sender.ts); ONE Record notifications carry a bearer token (onerecord-sender.ts).
 */
export function startDeliveryWorker(deps: {
  config: Config;
  store: DeliveryStore;
  clients: Pick<SigningSecretStore, "signingSecretsAt">;
  dispatcher: Dispatcher;
  metrics: DeliveryMetrics;
  log: Logger;
  /** The access tokens ONE Record notifications are sent with (createOneRecordTokens); none: no Authorization. */
  tokens: TokenClient | undefined;
  /** The registered partner a ONE Record notification's endpoint is on: it is sent only to one, with its audience's token. */
  partnerOf: PartnerOfUrl;
  /** After outcomes were recorded (each changed its delivery's row and added an attempt's). */
  onRecorded?: (outcomes: number) => void;
}): RunningDeliveryWorker {
  const { config, store, clients, dispatcher, metrics, log, tokens, partnerOf, onRecorded } = deps;
  const outbound = { dispatcher, allowPrivate: config.allowPrivateCallbacks };
  const worker = createDeliveryWorker({
    claim: (options) => store.claimDue(options),
    release: (held) => store.release(held),
    defer: (origin, byMs, limit) => store.deferOrigin(origin, byMs, limit),
    record: async (outcomes) => {
      const recorded = await store.recordOutcomes(outcomes, {
        disableAfterHours: config.delivery.disableAfterHours,
        onDisabled: (subscriptions) => {
          for (const s of subscriptions) {
            metrics.recordDisabled(s.kind, 1);
            log.warn(
              { kind: s.kind, subscriptionId: s.id, clientId: s.clientId, callback: s.callback, reason: s.reason },
              s.kind === "WEBHOOK"
                ? "subscription disabled: its deliveries keep failing; its owner can enable it again"
                : "ONE Record subscription disabled: its notifications keep failing; an operator can enable it again",
            );
          }
        },
        onParkingFailed: (error) =>
          log.warn({ err: error }, "parking a disabled subscription's deliveries failed; claims park them when due"),
      });
      onRecorded?.(recorded);
      return recorded;
    },
    send: async (delivery, startBy) => {
      // Its whole attempt, token requests included, ends within DELIVERY_TIMEOUT_MS: it fits the send budget.
      if (delivery.kind === "ONE_RECORD")
        return sendOneRecordNotification(delivery, { ...outbound, tokens, partnerOf });
      if (delivery.clientId === null) throw new Error(`webhook delivery ${delivery.id} has no client to sign for`);
      // Every attempt, a retry too, is signed with the secrets valid when it is sent (remembered
      // per client for SIGNING_SECRETS_CACHE_MS).
      const secrets = await clients.signingSecretsAt(delivery.clientId, new Date());
      if (performance.now() > startBy) return null; // too little lease left to send: give it back
      return sendNotification(delivery, secrets, outbound);
    },
    onAttempt: (outcome, delivery) => metrics.recordAttempt(outcome, delivery.kind, delivery.eventReceivedAt),
    onCircuit: (change, openCount) => metrics.recordCircuit(change.change, openCount),
    log: log.child({ component: "delivery-worker" }),
    options: config.delivery,
  });
  let listener: NotificationListener | undefined;
  if (config.databaseUrl)
    listener = listenForNotifications({
      url: config.databaseUrl,
      channel: DELIVERY_CHANNEL,
      onNotify: worker.wake,
      log,
    });
  worker.start();
  return {
    ...worker,
    handoff: worker.handoff,
    wakeups: () => (listener === undefined ? "not used" : listener.connected() ? "listening" : "reconnecting"),
    async stop() {
      await listener?.close();
      await worker.stop();
    },
  };
}

/**
 * The token client this process calls other ONE Record servers with (its notifications, its
 * subscription proposals), or undefined when no token endpoint is set: said once at start (info: a
 * gateway without ONE Record partners sends nothing), only by a process that `sends`. Its requests go
 * through undici's own agent: ONE_RECORD_TOKEN_URL is the operator's, not a callback.
 */
export function createOneRecordTokens(
  config: Config,
  metrics: DeliveryMetrics,
  log: Logger,
  { sends, dispatcher }: { sends: boolean; dispatcher?: Dispatcher },
): TokenClient | undefined {
  const settings = config.oneRecord.notificationToken;
  if (!settings) {
    if (sends)
      log.info(
        "ONE_RECORD_TOKEN_URL is not set: ONE Record notifications (and subscription proposals) go without an Authorization header; partners that authenticate their callers answer them 401",
      );
    return undefined;
  }
  return createTokenClient(settings, {
    ...(dispatcher ? { dispatcher } : {}),
    onRequest: (outcome) => metrics.recordTokenRequest(outcome),
  });
}
