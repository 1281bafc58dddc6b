import { randomUUID } from "node:crypto";
import http, { type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import type { Database } from "../../src/db/database";
import { queueDeliveries } from "../../src/delivery/delivery.store";
import { originOf } from "../../src/delivery/notification";
import type { Disposers } from "./harness";

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
 * Registers the partner whose server `endpoint` ({server}/notifications) is on, as partner:add does
 * (the sender sends only to registered partners' servers), with `audience` for its tokens (undefined:
 * as registered already, else none).
 */
export async function registerPartnerServer(
  database: Database,
  endpoint: string,
  audience?: string | null,
): Promise<void> {
  const serverUrl = endpoint.replace(/\/notifications$/, "");
  const organization = `${serverUrl}/logistics-objects/outbox-partner`;
  // Concurrent queueing registers the same partner: skipDuplicates, not an upsert (which races to a unique violation).
  await database.prisma.oneRecordPartner.createMany({
    data: [{ organization, serverUrl, audience: audience ?? null }],
    skipDuplicates: true,
  });
  if (audience !== undefined)
    await database.prisma.oneRecordPartner.update({ where: { organization }, data: { audience } });
}

/**
 * Queues one ONE Record notification to `endpoint` (unleased, due now), for `subscriptionId` (null:
 * an announcement or a request-status notification); answers its id (its Notification-Id). The
 * endpoint's server is registered as a partner's first, unless `registered` is false.
 */
export async function queueOneRecordNotification(
  database: Database,
  {
    subscriptionId,
    endpoint,
    eventId = null,
    clientId = null,
    payload = notificationBody(),
    registered = true,
  }: {
    subscriptionId: string | null;
    endpoint: string;
    eventId?: string | null;
    clientId?: string | null;
    payload?: string;
    registered?: boolean;
  },
): Promise<string> {
  if (registered) await registerPartnerServer(database, endpoint);
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

/** A POST a subscriber's notifications endpoint received. */
export interface NotificationPost {
  headers: IncomingHttpHeaders;
  body: string;
  /** The bearer token it carried, if any. */
  token: string | undefined;
}

export interface NotificationReceiver {
  /** Its notifications endpoint: http://127.0.0.1:<port>/onerecord/notifications. */
  readonly endpoint: string;
  readonly posts: NotificationPost[];
  /** How each POST is answered from now on (default 204). */
  answerWith(answer: (post: NotificationPost) => number): void;
  /** Stops listening (connections are refused) until `start`. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/** A ONE Record subscriber's notifications endpoint on 127.0.0.1: records every POST, answers as told. */
export async function startNotificationReceiver(disposers: Disposers): Promise<NotificationReceiver> {
  const posts: NotificationPost[] = [];
  let answer: (post: NotificationPost) => number = () => 204;
  const server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "");
      const post = { headers: request.headers, body, token: bearer?.[1] };
      posts.push(post);
      response.writeHead(answer(post)).end();
    });
  });
  let port = 0;
  let listening = false;
  const start = async () => {
    await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
    listening = true;
  };
  const stop = async () => {
    if (!listening) return;
    listening = false;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  await start();
  disposers.add(stop);
  return {
    endpoint: `http://127.0.0.1:${port}/onerecord/notifications`,
    posts,
    answerWith(next) {
      answer = next;
    },
    stop,
    start,
  };
}
