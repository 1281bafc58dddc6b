import { XSD } from "../jsonld-context";
import type { NodeObject } from "../jsonld-tree";

/** The api:NotificationEventType members this server sends. */
export type NotificationEventType =
  | "LOGISTICS_OBJECT_CREATED"
  | "LOGISTICS_OBJECT_UPDATED"
  | "LOGISTICS_OBJECT_AVAILABLE"
  | "LOGISTICS_EVENT_RECEIVED"
  | `${"CHANGE" | "SUBSCRIPTION" | "ACCESS_DELEGATION"}_REQUEST_${RequestStatusName}`;

/** An action request's status by its api: local name without the REQUEST_ prefix. */
export type RequestStatusName = "PENDING" | "ACCEPTED" | "REJECTED" | "FAILED" | "REVOKED";

/**
 * What one api:Notification says. Every URI is absolute (this server's objects, events and action
 * requests under its base URL): the body is fixed when it is queued and sent as it is on every try.
 */
export interface NotificationContent {
  readonly eventType: NotificationEventType;
  /**
   * The logistics object: its URI, or its state (sendLogisticsObjectBody) as expanded JSON-LD whose
   * `@id`s are already absolute.
   */
  readonly logisticsObject?: string | NodeObject | undefined;
  /** The object's class IRI (cargo:Shipment): api:hasLogisticsObjectType. */
  readonly logisticsObjectType?: string | undefined;
  /** The logistics event's URI (LOGISTICS_EVENT_RECEIVED). */
  readonly logisticsEvent?: string | undefined;
  /** The properties an update changed, as IRIs (LOGISTICS_OBJECT_UPDATED). */
  readonly changedProperties?: readonly string[] | undefined;
  /** The action request it follows from: the subscription's SubscriptionRequest, or the request whose status changed. */
  readonly triggeredBy?: string | undefined;
}

const CONTEXT = {
  api: "https://onerecord.iata.org/ns/api#",
  cargo: "https://onerecord.iata.org/ns/cargo#",
} as const;

const anyUri = (value: string) => ({ "@type": `${XSD}anyURI`, "@value": value });

/**
 * The api:Notification's JSON-LD text, in the form of the specification's examples (compacted with
 * the `api` and `cargo` prefixes; typed anyURI literals for hasLogisticsObjectType and
 * hasChangedProperty). An object's state is embedded in expanded form — valid JSON-LD inside a
 * compacted document, and the same bytes whatever the JSON-LD library would choose. Pure.
 */
export function notificationBody(content: NotificationContent): string {
  const body: Record<string, unknown> = {
    "@context": CONTEXT,
    "@type": "api:Notification",
    "api:hasEventType": { "@id": `api:${content.eventType}` },
  };
  const object = content.logisticsObject;
  if (object !== undefined) body["api:hasLogisticsObject"] = typeof object === "string" ? { "@id": object } : object;
  if (content.logisticsObjectType !== undefined)
    body["api:hasLogisticsObjectType"] = anyUri(content.logisticsObjectType);
  if (content.logisticsEvent !== undefined) body["api:hasLogisticsEvent"] = { "@id": content.logisticsEvent };
  if (content.changedProperties !== undefined && content.changedProperties.length > 0)
    body["api:hasChangedProperty"] = [...new Set(content.changedProperties)].sort().map(anyUri);
  if (content.triggeredBy !== undefined) body["api:isTriggeredBy"] = { "@id": content.triggeredBy };
  return JSON.stringify(body);
}
