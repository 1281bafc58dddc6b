import { createHash } from "node:crypto";
import type { Prisma } from "../../db/database";
import { AppError, type FieldError } from "../../errors";
import {
  isHttpUri,
  logisticsObjectClassOf,
  subscriptionEventTypeOf,
  type TopicType,
  topicTypeOf,
  TOPIC_TYPES,
  SUBSCRIPTION_EVENT_TYPES,
} from "./subscription-terms";

/**
 * What this server subscribes to when another publisher proposes a subscription (its
 * `GET {base}/subscriptions?topicType=&topic=`), as the operator set it (`npm run admin --
 * onerecord:want`): table onerecord_subscription_wish. A wish of type LOGISTICS_OBJECT_TYPE names a
 * class; one of type LOGISTICS_OBJECT_IDENTIFIER a URI prefix ("" for any object).
 */
export interface SubscriptionWish {
  readonly id: string;
  readonly topicType: TopicType;
  /** The class IRI, or the URI prefix ("" for any). */
  readonly topic: string;
  /** Subscription event type names (LOGISTICS_OBJECT_UPDATED…). */
  readonly eventTypes: readonly string[];
  readonly sendBody: boolean;
  readonly description: string | null;
  readonly createdAt: Date;
}

/** An operator's wish as given (names or IRIs), before it is checked. */
export interface WishInput {
  readonly topicType: string;
  /** A class IRI; for LOGISTICS_OBJECT_IDENTIFIER a URI prefix, "*" for any object. */
  readonly topic: string;
  readonly events: readonly string[];
  readonly sendBody?: boolean;
  readonly description?: string | null;
}

const MAX_DESCRIPTION = 1_000;

export function createSubscriptionWishes(prisma: Prisma) {
  const list = async (): Promise<SubscriptionWish[]> =>
    (await prisma.oneRecordSubscriptionWish.findMany({ orderBy: [{ topicType: "asc" }, { topic: "asc" }] })).map(
      wishOf,
    );
  return {
    list,

    /**
     * The wish for a proposed topic: for a class, the wish naming it; for an object's URI, the wish
     * with the longest prefix of it (the most specific one). With none, `anyTopic` (the
     * specification's default) answers a subscription to every event type of it, without bodies;
     * otherwise undefined (the operator takes only what it chose).
     */
    async wanted(topicType: TopicType, topic: string, anyTopic: boolean): Promise<SubscriptionWish | undefined> {
      const wishes = (await prisma.oneRecordSubscriptionWish.findMany({ where: { topicType } })).map(wishOf);
      const wish =
        topicType === "LOGISTICS_OBJECT_TYPE"
          ? wishes.find((each) => each.topic === topic)
          : wishes.filter((each) => topic.startsWith(each.topic)).sort((a, b) => b.topic.length - a.topic.length)[0];
      return wish ?? (anyTopic ? defaultWish(topicType, topic) : undefined);
    },

    /** Adds a wish, or replaces the one of the same topic type and topic; answers it. */
    async want(input: WishInput): Promise<SubscriptionWish> {
      const wish = checkedWish(input);
      const data = {
        eventTypes: [...wish.eventTypes],
        sendBody: wish.sendBody,
        description: wish.description,
      };
      return wishOf(
        await prisma.oneRecordSubscriptionWish.upsert({
          where: { topicType_topic: { topicType: wish.topicType, topic: wish.topic } },
          create: { topicType: wish.topicType, topic: wish.topic, ...data },
          update: data,
        }),
      );
    },

    /** Removes the wish of that topic type and topic; NOT_FOUND when there is none. */
    async unwant(topicTypeText: string, topicText: string): Promise<void> {
      const { topicType, topic } = checkedTopic(topicTypeText, topicText);
      const { count } = await prisma.oneRecordSubscriptionWish.deleteMany({ where: { topicType, topic } });
      if (count === 0) throw new AppError("NOT_FOUND", `No wish for ${topicType} ${topic || "(any object)"}`);
    },
  };
}

export type SubscriptionWishes = ReturnType<typeof createSubscriptionWishes>;

/** What this server wants of a topic no wish names: every event type, no bodies; its id stable per topic. */
function defaultWish(topicType: TopicType, topic: string): SubscriptionWish {
  const hex = createHash("sha256").update(`${topicType} ${topic}`).digest("hex");
  return {
    id: `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`,
    topicType,
    topic,
    eventTypes: SUBSCRIPTION_EVENT_TYPES,
    sendBody: false,
    description: null,
    createdAt: new Date(0),
  };
}

function wishOf(row: {
  id: string;
  topicType: string;
  topic: string;
  eventTypes: string[];
  sendBody: boolean;
  description: string | null;
  createdAt: Date;
}): SubscriptionWish {
  return { ...row, topicType: row.topicType as TopicType };
}

function checkedTopic(topicTypeText: string, topicText: string): { topicType: TopicType; topic: string } {
  const topicType = topicTypeOf(topicTypeText);
  if (topicType === undefined)
    throw invalid("topic-type", `is one of ${TOPIC_TYPES.join(", ")}, got ${JSON.stringify(topicTypeText)}`);
  if (topicType === "LOGISTICS_OBJECT_TYPE") {
    const topic = logisticsObjectClassOf(topicText);
    if (topic === undefined)
      throw invalid(
        "topic",
        `is a LogisticsObject class of the cargo ontology (https://onerecord.iata.org/ns/cargo#Shipment), got ${JSON.stringify(topicText)}`,
      );
    return { topicType, topic };
  }
  if (topicText === "*") return { topicType, topic: "" };
  if (!isHttpUri(topicText))
    throw invalid(
      "topic",
      `is the start of the objects' URIs (https://1r.partner.example/logistics-objects/), or * for any, got ${JSON.stringify(topicText)}`,
    );
  return { topicType, topic: topicText };
}

function checkedWish(input: WishInput): Omit<SubscriptionWish, "id" | "createdAt"> {
  const { topicType, topic } = checkedTopic(input.topicType, input.topic);
  const problems: FieldError[] = [];
  const names = new Set(input.events.map((text) => subscriptionEventTypeOf(text) ?? text));
  const unknown = [...names].filter((name) => !SUBSCRIPTION_EVENT_TYPES.includes(name));
  // In the enumeration's order, whatever order they were given in.
  const eventTypes = SUBSCRIPTION_EVENT_TYPES.filter((name) => names.has(name));
  if (eventTypes.length === 0 || unknown.length > 0)
    problems.push({
      field: "events",
      message: `one or more of ${SUBSCRIPTION_EVENT_TYPES.join(", ")}${unknown.length > 0 ? `, got ${unknown.join(", ")}` : ""}`,
    });
  const description = input.description ?? null;
  if (description !== null && (description.length === 0 || description.length > MAX_DESCRIPTION))
    problems.push({ field: "description", message: `1 to ${MAX_DESCRIPTION} characters` });
  if (problems.length > 0)
    throw new AppError("VALIDATION_FAILED", problems.map((p) => `--${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  return { topicType, topic, eventTypes, sendBody: input.sendBody ?? false, description };
}

function invalid(field: string, message: string): AppError {
  return new AppError("VALIDATION_FAILED", `--${field} ${message}`, { errors: [{ field, message }] });
}
