import type { FastifyInstance } from "fastify";
import { readJsonLdObject } from "../jsonld-codec";
import { jsonLdBodyOf, oneRecordCallerOf, sendCreated } from "../onerecord-http";
import type { OneRecordUris } from "../uris";
import { SUBSCRIPTION_REQUEST } from "./subscription-request.view";
import type { SubscriptionService } from "./subscriptions.service";

interface SubscriptionRouteDeps {
  readonly uris: OneRecordUris;
  readonly subscriptions?: SubscriptionService;
}

/** POST {base}/subscriptions: a subscriber's api:Subscription, answered with its SubscriptionRequest's URI. */
export function registerSubscriptionRoutes(
  scope: FastifyInstance,
  { uris, subscriptions }: SubscriptionRouteDeps,
): void {
  if (subscriptions === undefined) return;
  // Any authenticated caller may ask (the plugin's hook has checked who calls before the body is read);
  // the holder's policy decides on what it asks for.
  scope.post("/subscriptions", async (request, reply) => {
    const root = await readJsonLdObject(jsonLdBodyOf(request));
    const row = await subscriptions.subscribe(oneRecordCallerOf(request), root);
    return sendCreated(reply, uris.actionRequestUri(row.id), SUBSCRIPTION_REQUEST);
  });
}
