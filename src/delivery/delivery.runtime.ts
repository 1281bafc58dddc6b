import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { SigningSecretStore } from "../clients/signing-secret-store";
import type { Config } from "../config";
import { listenForNotifications, type NotificationListener } from "../db/notifications";
import type { DeliveryMetrics } from "./delivery.metrics";
import { DELIVERY_CHANNEL, type DeliveryStore } from "./delivery.store";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.worker";
import { sendNotification } from "./sender";

export interface RunningDeliveryWorker extends DeliveryWorker {
  /** "listening" when woken by PostgreSQL NOTIFY, "not used" on the embedded database (one process). */
  wakeups(): "listening" | "reconnecting" | "not used";
}

/**
 * The worker wired to the real store, HTTP client and signing secrets (used by the server and
 * `npm run worker`). It wakes on the in-process `wake()` after a local commit, on PostgreSQL NOTIFY
 * for commits made by other processes, and otherwise polls every DELIVERY_POLL_MS.
 */
export function startDeliveryWorker(deps: {
  config: Config;
  store: DeliveryStore;
  clients: Pick<SigningSecretStore, "signingSecretsAt">;
  dispatcher: Dispatcher;
  metrics: DeliveryMetrics;
  log: Logger;
}): RunningDeliveryWorker {
  const { config, store, clients, dispatcher, metrics, log } = deps;
  const worker = createDeliveryWorker({
    claim: (options) => store.claimDue(options),
    release: (held) => store.release(held),
    defer: (origin, byMs, limit) => store.deferOrigin(origin, byMs, limit),
    record: (outcomes) =>
      store.recordOutcomes(outcomes, {
        disableAfterHours: config.delivery.disableAfterHours,
        onDisabled: (subscriptions) => {
          metrics.recordDisabled(subscriptions.length);
          for (const s of subscriptions)
            log.warn(
              { subscriptionId: s.id, clientId: s.clientId, callback: s.callback, reason: s.reason },
              "subscription disabled: its deliveries keep failing; its owner can enable it again",
            );
        },
        onParkingFailed: (error) =>
          log.warn({ err: error }, "parking a disabled subscription's deliveries failed; claims park them when due"),
      }),
    send: async (delivery, startBy) => {
      // Every attempt, a retry too, is signed with the secrets valid when it is sent (remembered
      // per client for SIGNING_SECRETS_CACHE_MS).
      if (delivery.kind !== "WEBHOOK" || delivery.clientId === null)
        throw new Error("ONE Record notifications are not sent yet (issue 26, in progress)");
      const secrets = await clients.signingSecretsAt(delivery.clientId, new Date());
      if (performance.now() > startBy) return null; // too little lease left to send: give it back
      return sendNotification(delivery, secrets, { dispatcher, allowPrivate: config.allowPrivateCallbacks });
    },
    onAttempt: (outcome, delivery) => metrics.recordAttempt(outcome, delivery.eventReceivedAt),
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
