import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { ClientService } from "../clients/client.service";
import type { Config } from "../config";
import type { DeliveryMetrics } from "./delivery.metrics";
import type { DeliveryStore } from "./delivery.store";
import { createDeliveryWorker, type DeliveryWorker } from "./delivery.worker";
import { sendNotification } from "./sender";

/** Signing secrets are read once per this long per client; a rotation reaches deliveries within it. */
const SECRET_CACHE_MS = 30_000;

/** The worker wired to the real store, HTTP client and signing secrets (used by the server and `npm run worker`). */
export function startDeliveryWorker(deps: { config: Config; store: DeliveryStore; clients: ClientService; dispatcher: Dispatcher; metrics: DeliveryMetrics; log: Logger }): DeliveryWorker {
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
    claim: store.claimDue,
    release: store.release,
    defer: store.deferOrigin,
    record: store.recordOutcomes,
    send: async (delivery) => sendNotification(delivery, await secretFor(delivery.clientId), { dispatcher, allowPrivate: config.allowPrivateCallbacks }),
    onAttempt: (outcome, delivery) => metrics.recordAttempt(outcome, delivery.eventReceivedAt),
    log: log.child({ component: "delivery-worker" }),
    options: config.delivery,
  });
  worker.start();
  return worker;
}
