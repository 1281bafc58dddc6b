import type { FastifyInstance, FastifyRequest } from "fastify";
import { AppError } from "../../errors";
import { CARRIER_ORGANIZATION_ID } from "../identity/organizations";
import { ONE_RECORD_CONTEXT } from "../jsonld-context";
import { jsonLdBodyOf, oneRecordCallerOf, sendJsonLd } from "../onerecord-http";
import { invalidQuery, queryOf } from "../query";
import type { OneRecordUris } from "../uris";
import type { NotificationsIn } from "./notifications-in.service";
import { isHttpUri, logisticsObjectClassOf, TOPIC_TYPES, type TopicType, topicTypeOf } from "./subscription-terms";
import type { SubscriptionWish, SubscriptionWishes } from "./subscription-wishes";

/**
 * The gateway as a subscriber (docs/ONE-RECORD.md "Receiving notifications"): `POST /notifications`
 * from other ONE Record servers (registered partners only, within their daily quota: the service
 * decides), and `GET /subscriptions?topicType=&topic=`, what this server wants when a publisher
 * proposes a subscription (any authenticated caller, as the specification asks).
 */
export function registerSubscriberRoutes(
  scope: FastifyInstance,
  deps: {
    notificationsIn: NotificationsIn;
    wishes: SubscriptionWishes;
    uris: OneRecordUris;
    /** config.oneRecord.subscribeToAnyTopic: a proposal no wish names is wanted too. */
    anyTopic: boolean;
  },
): void {
  const { notificationsIn, wishes, uris, anyTopic } = deps;

  scope.post(
    "/notifications",
    { bodyLimit: MAX_NOTIFICATION_BYTES, onRequest: refuseLargeBody },
    async (request, reply) => {
      const header = request.headers["notification-id"];
      await notificationsIn.receive(
        oneRecordCallerOf(request),
        jsonLdBodyOf(request),
        Array.isArray(header) ? header.join(", ") : header,
      );
      return reply.code(204).send();
    },
  );

  scope.get("/subscriptions", async (request, reply) => {
    const { topicType, topic } = readProposal(queryOf(request));
    const wish = await wishes.wanted(topicType, topic, anyTopic);
    if (wish === undefined)
      throw new AppError(
        "SUBSCRIPTION_NOT_WANTED",
        `This server wants no subscription to ${topicType} ${topic}: it subscribes only to what its operator chose (ONE_RECORD_SUBSCRIBE_TO=wishes)`,
      );
    return sendJsonLd(reply, 200, subscriptionBody(wish, topicType, topic, uris));
  });
}

/**
 * The largest api:Notification body taken (bytes): the specification's examples, an object's body
 * included, are a few KiB; every one taken is stored. Beyond, 413 and nothing stored. Its stored form
 * is bounded apart (MAX_STORED_NOTIFICATION_BYTES), as expanding may multiply it.
 */
export const MAX_NOTIFICATION_BYTES = 256 * 1024;

/**
 * Refuses a body its Content-Length says is too large before reading it, naming this route's limit;
 * one sent without a length is cut off at the same limit by the route's bodyLimit.
 */
async function refuseLargeBody(request: FastifyRequest): Promise<void> {
  const length = Number(request.headers["content-length"]);
  if (Number.isFinite(length) && length > MAX_NOTIFICATION_BYTES)
    throw new AppError("PAYLOAD_TOO_LARGE", `A notification's body exceeds ${MAX_NOTIFICATION_BYTES / 1024} KiB`);
}

/** The parameters of a proposal, as the specification's "Get Subscription information as Publisher" writes them. */
function readProposal(query: Record<string, string | undefined>): { topicType: TopicType; topic: string } {
  const { topicType: typeText, topic: topicText } = query;
  if (typeText === undefined || typeText === "")
    throw invalidQuery("topicType", `is required: ${TOPIC_TYPES.map((name) => `api:${name}`).join(" or ")}`);
  if (topicText === undefined || topicText === "")
    throw invalidQuery("topic", "is required: a Logistics Object URI or a data class IRI");
  const topicType = topicTypeOf(typeText);
  if (topicType === undefined)
    throw invalidQuery(
      "topicType",
      `is https://onerecord.iata.org/ns/api#LOGISTICS_OBJECT_TYPE or …#LOGISTICS_OBJECT_IDENTIFIER (# written %23 or /), got ${JSON.stringify(typeText)}`,
    );
  if (topicType === "LOGISTICS_OBJECT_IDENTIFIER") {
    if (!isHttpUri(topicText))
      throw invalidQuery("topic", `is a Logistics Object URI (absolute http(s)), got ${JSON.stringify(topicText)}`);
    return { topicType, topic: topicText };
  }
  const topic = logisticsObjectClassOf(topicText);
  if (topic === undefined)
    throw invalidQuery(
      "topic",
      `is a Logistics Object type this server supports: a LogisticsObject class of the cargo ontology (https://onerecord.iata.org/ns/cargo#Shipment), got ${JSON.stringify(topicText)}`,
    );
  return { topicType, topic };
}

/**
 * The api:Subscription this server wants for the topic as asked: its subscriber the carrier's
 * Organization, the topic and topic type as the publisher named them, the wish's event types and
 * body choice. Its @id names the wish (under `{base}/subscriptions/`, as the specification's example).
 */
function subscriptionBody(
  wish: SubscriptionWish,
  topicType: TopicType,
  topic: string,
  uris: OneRecordUris,
): Record<string, unknown> {
  return {
    "@context": ONE_RECORD_CONTEXT,
    "@id": `${uris.base()}/subscriptions/${wish.id}`,
    "@type": "api:Subscription",
    "api:hasContentType": "application/ld+json",
    "api:hasSubscriber": { "@id": uris.objectUri(CARRIER_ORGANIZATION_ID) },
    "api:hasTopicType": { "@id": `api:${topicType}` },
    "api:hasTopic": topic,
    "api:includeSubscriptionEventType": wish.eventTypes.map((name) => ({ "@id": `api:${name}` })),
    "api:sendLogisticsObjectBody": wish.sendBody,
    "api:notifyRequestStatusChange": false,
    ...(wish.description === null ? {} : { "api:hasDescription": wish.description }),
  };
}
