import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { ClientService } from "../clients/client.service";
import type { Config } from "../config";
import { listenForNotifications, type NotificationListener } from "../db/notifications";
import type { DeliveryMetrics } from "./delivery.metrics";
import { DELIVERY_CHANNEL, type DeliveryStore } from "./delivery.store";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.worker";
import { sendNotification } from "./sender";

/** Signing secrets are read once per this long per client; a rotation reaches deliveries within it. */
const SECRET_CACHE_MS = 30_000;

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
  clients: ClientService;
  dispatcher: Dispatcher;
  metrics: DeliveryMetrics;
  log: Logger;
}): RunningDeliveryWorker {
  const { config, store, clients, dispatcher, metrics, log } = deps;
  const secrets = new Map<string, { secret: string; until: number }>();
  const secretFor = async (clientId: string): Promise<string> => {
    const cached = secrets.get(clientId);
    if (cached && cached.until > Date.now()) return cached.secret;
    const secret = await clients.signingSecretOf(clientId);
    secrets.set(clientId, { secret, until: Date.now() + SECRET_CACHE_MS });
    return secret;
  };
  const worker = createDeliveryWorker({
    claim: (options) => store.claimDue(options),
    release: (held) => store.release(held),
    defer: (origin, byMs, limit) => store.deferOrigin(origin, byMs, limit),
    record: (outcomes) => store.recordOutcomes(outcomes),
    send: async (delivery, startBy) => {
      const secret = await secretFor(delivery.clientId);
      if (performance.now() > startBy) return null; // too little lease left to send: give it back
      return sendNotification(delivery, secret, { dispatcher, allowPrivate: config.allowPrivateCallbacks });
    },
    onAttempt: (outcome, delivery) => metrics.recordAttempt(outcome, delivery.eventReceivedAt),
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
