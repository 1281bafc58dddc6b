import { randomUUID } from "node:crypto";
import type { Database } from "../../src/db/database";
import { queueDeliveries } from "../../src/delivery/delivery.store";
import { originOf } from "../../src/delivery/notification";

/**
 * ONE Record subscriptions and notifications written straight into a database, for the outbox's
 * tests: an onerecord_subscription row as the subscriptions slice stores an accepted one, and
 * deliveries queued with `queueDeliveries` as the producers queue them.
 */

export interface OneRecordSubscriptionFields {
  endpoint?: string;
  status?: string;
  expiresAt?: Date | null;
  disabledAt?: Date | null;
  failingSince?: Date | null;
  clientId?: string | null;
}

/** An accepted ONE Record subscription (a SubscriptionRequest's row) notifying `endpoint`; answers its id. */
export async function oneRecordSubscription(
  database: Database,
  fields: OneRecordSubscriptionFields = {},
): Promise<string> {
  const endpoint = fields.endpoint ?? "http://subscriber.test/onerecord/notifications";
  const row = await database.prisma.oneRecordSubscription.create({
    data: {
      status: fields.status ?? "REQUEST_ACCEPTED",
      initiatedBy: "SUBSCRIBER",
      requestedBy: "https://subscriber.test/logistics-objects/forwarder",
      subscription: { "@type": "https://onerecord.iata.org/ns/api#Subscription" },
      subscriber: "https://subscriber.test/logistics-objects/forwarder",
      topicType: "https://onerecord.iata.org/ns/api#LOGISTICS_OBJECT_TYPE",
      topic: "https://onerecord.iata.org/ns/cargo#Shipment",
      eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
      endpoint,
      origin: originOf(endpoint),
      clientId: fields.clientId ?? null,
      expiresAt: fields.expiresAt ?? null,
      disabledAt: fields.disabledAt ?? null,
      failingSince: fields.failingSince ?? null,
    },
  });
  return row.id;
}

/** An api:Notification body as the producers write it (decision 6 of the brief: a LOGISTICS_EVENT_RECEIVED). */
export function notificationBody(
  objectUri = "http://publisher.test/onerecord/logistics-objects/shipment-020-12345675",
): string {
  return JSON.stringify({
    "@context": { api: "https://onerecord.iata.org/ns/api#", cargo: "https://onerecord.iata.org/ns/cargo#" },
    "@type": "api:Notification",
    "api:hasEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
    "api:hasLogisticsObject": { "@id": objectUri },
    "api:hasLogisticsObjectType": {
      "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
      "@value": "https://onerecord.iata.org/ns/cargo#Shipment",
    },
    "api:hasLogisticsEvent": { "@id": `${objectUri}/logistics-events/${randomUUID()}` },
    "api:isTriggeredBy": { "@id": `http://publisher.test/onerecord/action-requests/${randomUUID()}` },
  });
}

/**
 * Queues one ONE Record notification to `endpoint` (unleased, due now), for `subscriptionId` (null:
 * an announcement or a request-status notification); answers its id (its Notification-Id).
 */
export async function queueOneRecordNotification(
  database: Database,
  {
    subscriptionId,
    endpoint,
    eventId = null,
    clientId = null,
    payload = notificationBody(),
  }: {
    subscriptionId: string | null;
    endpoint: string;
    eventId?: string | null;
    clientId?: string | null;
    payload?: string;
  },
): Promise<string> {
  const id = randomUUID();
  await queueDeliveries(
    database.prisma,
    [
      {
        id,
        kind: "ONE_RECORD",
        eventId,
        subscriptionId: null,
        oneRecordSubscriptionId: subscriptionId,
        clientId,
        callback: endpoint,
        origin: originOf(endpoint),
        payload,
        leased: false,
      },
    ],
    { token: randomUUID(), ms: 30_000 },
  );
  return id;
}

/** Empties the ONE Record subscriptions (and, cascading from emptyTables, nothing else of theirs is left). */
export async function emptyOneRecordOutbox(database: Database): Promise<void> {
  await database.sql.query("TRUNCATE delivery, onerecord_subscription CASCADE", []);
}
