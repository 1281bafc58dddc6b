import { API, XSD } from "../jsonld-context";
import { literalOf, type NodeObject, typesOf, valuesOf } from "../jsonld-tree";
import { subscriptionEventTypeOf, topicTypeOf } from "../notifications-in/subscription-terms";

/**
 * A partner's answer to `GET {server}/subscriptions?topicType=&topic=` (the specification's "Get
 * Subscription information as Publisher"), checked as the specification leaves to the publisher:
 * each api:Subscription must be for the topic and topic type asked, for the partner itself (a
 * proposal is this server asking the partner, never on a third party's behalf), with event types of
 * the enumeration.
 */

/** A subscription the partner answered that this server records. */
export interface AcceptedSubscription {
  /** The api:Subscription node as answered (expanded JSON-LD, flattened). */
  readonly node: NodeObject;
  readonly eventTypes: readonly string[];
  readonly expiresAt: Date | null;
  readonly sendBody: boolean;
  readonly notifyStatusChange: boolean;
}

export interface ReadAnswer {
  readonly accepted: readonly AcceptedSubscription[];
  /** Why each other api:Subscription of the answer was not taken. */
  readonly refused: readonly string[];
}

export interface Asked {
  /** The topic's URI, as asked. */
  readonly topic: string;
  /** The partner's Organization URI (as this server names it). */
  readonly partnerUri: string;
  /** The partner's ONE Record server (onerecord_partner.server_url): its own URIs name it too. */
  readonly serverUrl: string;
  readonly now: Date;
}

const SUBSCRIPTION = `${API}Subscription`;
const term = (name: string) => `${API}${name}`;
const JSON_LD = "application/ld+json";

/** The subscriptions of an answer's flattened nodes; nodes of other classes are ignored. */
export function readProposalAnswer(nodes: readonly NodeObject[], asked: Asked): ReadAnswer {
  const accepted: AcceptedSubscription[] = [];
  const refused: string[] = [];
  for (const node of nodes.filter((n) => typesOf(n).includes(SUBSCRIPTION))) {
    const result = readSubscription(node, asked);
    if (typeof result === "string") refused.push(result);
    else if (result !== undefined) accepted.push(result);
  }
  return { accepted, refused };
}

/** The subscription, why it is refused, or undefined when it has expired already (nothing to record). */
function readSubscription(node: NodeObject, asked: Asked): AcceptedSubscription | string | undefined {
  const ids = (name: string) => valuesOf(node, term(name)).map((value) => value["@id"]);
  const topicTypes = ids("hasTopicType");
  if (topicTypes.length !== 1 || topicTypeOf(String(topicTypes[0])) !== "LOGISTICS_OBJECT_IDENTIFIER")
    return `its api:hasTopicType is not api:LOGISTICS_OBJECT_IDENTIFIER, as asked`;
  const topics = valuesOf(node, term("hasTopic")).map((value) => value["@value"] ?? value["@id"]);
  if (topics.length !== 1 || topics[0] !== asked.topic)
    return `its api:hasTopic is ${JSON.stringify(topics.length === 1 ? topics[0] : topics)}, not the topic asked (${asked.topic})`;
  const subscribers = ids("hasSubscriber");
  if (subscribers.length !== 1 || typeof subscribers[0] !== "string" || !isThePartner(subscribers[0], asked))
    return `its api:hasSubscriber (${JSON.stringify(subscribers)}) is not the partner: a proposal is answered for the partner itself`;
  const eventTexts = ids("includeSubscriptionEventType");
  const eventTypes = eventTexts.map((id) => (typeof id === "string" ? subscriptionEventTypeOf(id) : undefined));
  if (eventTypes.length === 0 || eventTypes.some((name) => name === undefined))
    return `its api:includeSubscriptionEventType (${JSON.stringify(eventTexts)}) is not one or more of LOGISTICS_OBJECT_CREATED, LOGISTICS_OBJECT_UPDATED, LOGISTICS_EVENT_RECEIVED`;
  const contentTypes = valuesOf(node, term("hasContentType")).map((value) => String(value["@value"]));
  if (contentTypes.length > 0 && !contentTypes.some((type) => type.split(";")[0]!.trim().toLowerCase() === JSON_LD))
    return `its api:hasContentType (${contentTypes.join(", ")}) does not take ${JSON_LD}, the only type this server sends`;
  const expiries = valuesOf(node, term("expiresAt"));
  const expiresText = literalOf(node, term("expiresAt"));
  const expiresAt = expiresText === undefined ? null : new Date(expiresText);
  if (expiries.length > 1 || (expiresAt !== null && Number.isNaN(expiresAt.getTime())))
    return `its api:expiresAt is not one ${XSD}dateTime`;
  if (expiresAt !== null && expiresAt.getTime() <= asked.now.getTime()) return undefined;
  const flag = (name: string) => {
    const text = literalOf(node, term(name));
    return text === "true" || text === "1";
  };
  return {
    node,
    eventTypes: [...new Set(eventTypes as string[])],
    expiresAt,
    sendBody: flag("sendLogisticsObjectBody"),
    notifyStatusChange: flag("notifyRequestStatusChange"),
  };
}

/** The partner's Organization as this server names it, or any URI of the partner's own server. */
function isThePartner(subscriber: string, asked: Asked): boolean {
  if (subscriber === asked.partnerUri) return true;
  if (!URL.canParse(subscriber) || !URL.canParse(asked.serverUrl)) return false;
  return new URL(subscriber).origin === new URL(asked.serverUrl).origin;
}
