import { API, CARGO } from "../jsonld-context";
import { isLogisticsObjectClass } from "../objects/object-model";
import api from "../vocabulary/api.json";

/**
 * The API ontology's terms of a Subscription as this server reads them wherever they come from (a
 * query parameter, an operator's command, another server's answer): topic types, subscription event
 * types, and a topic that is a class.
 */

export type TopicType = "LOGISTICS_OBJECT_TYPE" | "LOGISTICS_OBJECT_IDENTIFIER";
export const TOPIC_TYPES: readonly TopicType[] = ["LOGISTICS_OBJECT_TYPE", "LOGISTICS_OBJECT_IDENTIFIER"];

const membersOf = (enumeration: string): string[] =>
  api.enumerations[`${API}${enumeration}` as keyof typeof api.enumerations].members.map((member) => member.label);

/** LOGISTICS_EVENT_RECEIVED, LOGISTICS_OBJECT_CREATED, LOGISTICS_OBJECT_UPDATED. */
export const SUBSCRIPTION_EVENT_TYPES: readonly string[] = membersOf("SubscriptionEventType");

/**
 * The member's name from how a client may write it: its IRI, the IRI with "/" for "#" (the
 * specification lets a query parameter write it so), "api:NAME", or the bare name. Undefined for
 * anything else.
 */
function memberName(text: string, members: readonly string[]): string | undefined {
  const name = text
    .trim()
    .replace(/^https:\/\/onerecord\.iata\.org\/ns\/api[#/]/, "")
    .replace(/^api:/, "");
  return members.includes(name) ? name : undefined;
}

export function topicTypeOf(text: string): TopicType | undefined {
  return memberName(text, TOPIC_TYPES) as TopicType | undefined;
}

export function subscriptionEventTypeOf(text: string): string | undefined {
  return memberName(text, SUBSCRIPTION_EVENT_TYPES);
}

/**
 * A LogisticsObject class of the cargo ontology from its IRI (also with "/" for "#", or "cargo:Name");
 * undefined for any other text.
 */
export function logisticsObjectClassOf(text: string): string | undefined {
  const iri = text
    .trim()
    .replace(/^https:\/\/onerecord\.iata\.org\/ns\/cargo\//, CARGO)
    .replace(/^cargo:/, CARGO);
  return iri.startsWith(CARGO) && isLogisticsObjectClass(iri) ? iri : undefined;
}

/** An absolute http(s) URI, as a topic of type LOGISTICS_OBJECT_IDENTIFIER must be. */
export function isHttpUri(text: string): boolean {
  return /^https?:\/\/\S+$/i.test(text) && URL.canParse(text);
}
