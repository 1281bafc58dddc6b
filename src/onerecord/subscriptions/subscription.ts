import { AppError, type FieldError } from "../../errors";
import { API, XSD } from "../jsonld-context";
import { isLocalId, isNode, type JsonLdValue, type NodeObject, typesOf, valuesOf } from "../jsonld-tree";
import { isLogisticsObjectClass } from "../objects/object-model";
import api from "../vocabulary/api.json";

/**
 * An api:Subscription as a subscriber POSTs it (the specification's "Subscribe to Logistics Objects"),
 * read from its expanded tree: what it says, checked against the API ontology's Subscription class.
 * What only the server's state decides (the topic object exists, the subscriber is the caller, where
 * notifications go, expiresAt still ahead) is the service's to check.
 */

export type TopicType = "LOGISTICS_OBJECT_IDENTIFIER" | "LOGISTICS_OBJECT_TYPE";
export type SubscriptionEventType =
  "LOGISTICS_OBJECT_CREATED" | "LOGISTICS_OBJECT_UPDATED" | "LOGISTICS_EVENT_RECEIVED";

export interface Subscription {
  /** The subscriber's own IRI for it, when it gave one (the specification lets it name its subscriptions). */
  readonly id: string | undefined;
  /** hasSubscriber's IRI. */
  readonly subscriber: string;
  readonly topicType: TopicType;
  /** A logistics object's URI (LOGISTICS_OBJECT_IDENTIFIER) or a LogisticsObject class IRI (LOGISTICS_OBJECT_TYPE). */
  readonly topic: string;
  /** Each once, in the order given. */
  readonly eventTypes: readonly SubscriptionEventType[];
  readonly expiresAt: Date | undefined;
  readonly sendBody: boolean;
  readonly notifyStatusChange: boolean;
  /** As given; empty when none was. */
  readonly contentTypes: readonly string[];
  readonly description: string | undefined;
}

const term = (name: string) => `${API}${name}`;
const SUBSCRIPTION = term("Subscription");
const TOPIC_TYPES: readonly TopicType[] = ["LOGISTICS_OBJECT_IDENTIFIER", "LOGISTICS_OBJECT_TYPE"];
const EVENT_TYPES: readonly SubscriptionEventType[] = [
  "LOGISTICS_OBJECT_CREATED",
  "LOGISTICS_OBJECT_UPDATED",
  "LOGISTICS_EVENT_RECEIVED",
];

/** The properties the API ontology gives api:Subscription: no other is taken. */
const PROPERTIES = new Set(
  Object.keys((api.classes as Record<string, { properties: Record<string, unknown> }>)[SUBSCRIPTION]!.properties),
);

/**
 * The most characters an api:hasDescription (of a subscription or an access delegation) may have: a
 * note for people, stored with the request as long as it is kept.
 */
export const MAX_DESCRIPTION_CHARACTERS = 1_000;

/** The most of one multi-valued property a subscription may carry (there are three event types). */
const MAX_CONTENT_TYPES = 20;

/** Reads an api:Subscription; one that is not well formed is refused (400), each problem named by its property. */
export function readSubscription(root: NodeObject): Subscription {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  if (!typesOf(root).includes(SUBSCRIPTION)) problem(SUBSCRIPTION, "the body must be an api:Subscription");
  for (const key of Object.keys(root))
    if (!key.startsWith("@") && !PROPERTIES.has(key)) problem(key, "is not a property of api:Subscription");
  const one = (property: string): JsonLdValue | undefined => {
    const values = valuesOf(root, property);
    if (values.length > 1) problem(property, "takes one value");
    return values[0];
  };

  const subscriberValue = one(term("hasSubscriber"));
  const subscriber = iriOf(subscriberValue);
  if (subscriber === undefined || !isAbsoluteUri(subscriber))
    problem(term("hasSubscriber"), "names the subscribing Organization by its URI");

  const topicTypeIri = iriOf(one(term("hasTopicType")));
  const topicType = TOPIC_TYPES.find((name) => term(name) === topicTypeIri);
  if (topicType === undefined)
    problem(term("hasTopicType"), `is api:LOGISTICS_OBJECT_IDENTIFIER or api:LOGISTICS_OBJECT_TYPE`);

  const topicValue = one(term("hasTopic"));
  const topic = topicValue === undefined ? undefined : (textOf(topicValue) ?? iriOf(topicValue));
  if (topic === undefined || !isAbsoluteUri(topic)) problem(term("hasTopic"), "is an absolute URI (xsd:anyURI)");
  else if (topicType === "LOGISTICS_OBJECT_TYPE" && !isLogisticsObjectClass(topic))
    problem(
      term("hasTopic"),
      `Logistics Object Type not supported: ${topic} is no LogisticsObject class of the cargo ontology`,
    );

  const eventTypes: SubscriptionEventType[] = [];
  const given = valuesOf(root, term("includeSubscriptionEventType"));
  for (const value of given) {
    const iri = iriOf(value);
    const eventType = EVENT_TYPES.find((name) => term(name) === iri);
    if (eventType === undefined)
      problem(term("includeSubscriptionEventType"), `${iri ?? "a literal"} is no api:SubscriptionEventType`);
    else if (!eventTypes.includes(eventType)) eventTypes.push(eventType);
  }
  if (given.length === 0)
    problem(
      term("includeSubscriptionEventType"),
      `names at least one of ${EVENT_TYPES.map((e) => `api:${e}`).join(", ")}`,
    );

  const expiresText = one(term("expiresAt"));
  let expiresAt: Date | undefined;
  if (expiresText !== undefined) {
    const text = typedTextOf(expiresText, `${XSD}dateTime`);
    expiresAt = text !== undefined && DATE_TIME.test(text) ? new Date(text) : undefined;
    if (expiresAt === undefined || Number.isNaN(expiresAt.getTime()))
      problem(term("expiresAt"), "is an xsd:dateTime with its time zone, such as 2026-12-31T23:59:59Z");
  }

  const sendBody = booleanOf(one(term("sendLogisticsObjectBody")), term("sendLogisticsObjectBody"), problem);
  const notifyStatusChange = booleanOf(
    one(term("notifyRequestStatusChange")),
    term("notifyRequestStatusChange"),
    problem,
  );

  const contentTypes = valuesOf(root, term("hasContentType")).map((value) => typedTextOf(value, `${XSD}string`));
  if (contentTypes.some((value) => value === undefined))
    problem(term("hasContentType"), "each is a media type as a string, such as application/ld+json");
  if (contentTypes.length > MAX_CONTENT_TYPES) problem(term("hasContentType"), `at most ${MAX_CONTENT_TYPES}`);

  const descriptionValue = one(term("hasDescription"));
  const description = descriptionValue === undefined ? undefined : typedTextOf(descriptionValue, `${XSD}string`);
  if (descriptionValue !== undefined && description === undefined) problem(term("hasDescription"), "is a string");
  else if (description !== undefined && [...description].length > MAX_DESCRIPTION_CHARACTERS)
    problem(term("hasDescription"), `at most ${MAX_DESCRIPTION_CHARACTERS} characters`);

  if (problems.length > 0)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  const id = root["@id"];
  return {
    id: typeof id === "string" && isAbsoluteUri(id) ? id : undefined,
    subscriber: subscriber!,
    topicType: topicType!,
    topic: topic!,
    eventTypes,
    expiresAt,
    sendBody: sendBody ?? false,
    notifyStatusChange: notifyStatusChange ?? false,
    contentTypes: contentTypes as string[],
    description,
  };
}

/** Whether a subscription's content types let this server send application/ld+json (none given: they do). */
export function allowsJsonLd(contentTypes: readonly string[]): boolean {
  if (contentTypes.length === 0) return true;
  return contentTypes.some((value) => value.split(";")[0]!.trim().toLowerCase() === "application/ld+json");
}

/** Its xsd:dateTime form, with a time zone: what `new Date` reads the same everywhere. */
const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

function iriOf(value: JsonLdValue | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (isNode(value) && typeof value["@id"] === "string") return value["@id"];
  // A literal holding the full IRI, as some clients write enumeration members.
  const text = textOf(value);
  return text !== undefined && isAbsoluteUri(text) ? text : undefined;
}

function textOf(value: JsonLdValue): string | undefined {
  const literal = value["@value"];
  return typeof literal === "string" ? literal : undefined;
}

/** A literal's text when it is untyped or typed `datatype` (or a string's language-tagged form). */
function typedTextOf(value: JsonLdValue, datatype: string): string | undefined {
  const type = value["@type"];
  if (type !== undefined && type !== datatype) return undefined;
  return textOf(value);
}

function booleanOf(
  value: JsonLdValue | undefined,
  property: string,
  problem: (field: string, message: string) => void,
): boolean | undefined {
  if (value === undefined) return undefined;
  const literal = value["@value"];
  const type = value["@type"];
  if (typeof literal === "boolean" && (type === undefined || type === `${XSD}boolean`)) return literal;
  if ((literal === "true" || literal === "false") && (type === undefined || type === `${XSD}boolean`))
    return literal === "true";
  problem(property, "is true or false (xsd:boolean)");
  return undefined;
}

/** An absolute URI: a scheme, and no character a URI never holds. */
function isAbsoluteUri(text: string): boolean {
  return !isLocalId(text) && /^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>"{}|\\^`]+$/.test(text);
}
