import { AppError, type FieldError } from "../../errors";
import { API } from "../jsonld-context";
import { isNode, type JsonLdValue, type NodeObject, typesOf, valuesOf } from "../jsonld-tree";
import api from "../vocabulary/api.json";

/**
 * An api:Notification another ONE Record server POSTs to this one (the specification's "Send
 * Notification"), read from its expanded tree. Only what this server relies on is checked: the class,
 * the event type (one member of api:NotificationEventType) and the links a notification names by IRI;
 * the rest is kept as it came.
 */
export interface ReceivedNotification {
  /** The NotificationEventType member's name: "LOGISTICS_OBJECT_UPDATED". */
  readonly eventType: string;
  /** The IRI of api:hasLogisticsObject, when it names one. */
  readonly logisticsObject: string | undefined;
}

const NOTIFICATION = `${API}Notification`;
const term = (name: string) => `${API}${name}`;

/** The event types a notification may carry: the API ontology's closed enumeration, by IRI. */
const EVENT_TYPES: ReadonlyMap<string, string> = new Map(
  api.enumerations[`${API}NotificationEventType` as keyof typeof api.enumerations].members.map((member) => [
    member.iri,
    member.label,
  ]),
);

/** Reads an api:Notification; one that is not refused (400), naming each property at fault. */
export function readNotification(root: NodeObject): ReceivedNotification {
  const problems: FieldError[] = [];
  const problem = (field: string, message: string) => problems.push({ field, message });
  if (!typesOf(root).includes(NOTIFICATION)) problem(NOTIFICATION, "the body must be an api:Notification");

  const eventTypes = valuesOf(root, term("hasEventType"));
  const eventIri = eventTypes.length === 1 ? iriOf(eventTypes[0]!) : undefined;
  const eventType = eventIri === undefined ? undefined : EVENT_TYPES.get(eventIri);
  if (eventType === undefined)
    problem(
      term("hasEventType"),
      eventTypes.length > 1
        ? "exactly one value"
        : 'exactly one value, a member of api:NotificationEventType such as {"@id": "api:LOGISTICS_OBJECT_UPDATED"}',
    );

  const objects = valuesOf(root, term("hasLogisticsObject"));
  const logisticsObject = objects.length === 1 ? iriOf(objects[0]!) : undefined;
  if (objects.length > 1) problem(term("hasLogisticsObject"), "at most one value");
  else if (objects.length === 1 && logisticsObject === undefined)
    problem(term("hasLogisticsObject"), "names the logistics object by its URI (an absolute http(s) IRI as @id)");

  const objectTypes = valuesOf(root, term("hasLogisticsObjectType"));
  if (objectTypes.length > 1) problem(term("hasLogisticsObjectType"), "at most one value");
  else if (objectTypes.length === 1 && !isAbsoluteIri(objectTypes[0]!["@value"]))
    problem(term("hasLogisticsObjectType"), "is the object's class as an xsd:anyURI literal");

  for (const name of ["hasLogisticsEvent", "isTriggeredBy"]) {
    const values = valuesOf(root, term(name));
    if (name === "isTriggeredBy" && values.length > 1) problem(term(name), "at most one value");
    else if (values.some((value) => iriOf(value) === undefined))
      problem(term(name), "names its resource by its URI (an absolute http(s) IRI as @id)");
  }

  if (problems.length > 0 || eventType === undefined)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  return { eventType, logisticsObject };
}

/** The @id of a node or reference when it is an absolute http(s) IRI (no blank node, no embedded id). */
function iriOf(value: JsonLdValue): string | undefined {
  if (!isNode(value)) return undefined;
  const id = value["@id"];
  return isAbsoluteIri(id) ? id : undefined;
}

function isAbsoluteIri(value: unknown): value is string {
  return typeof value === "string" && /^https?:\/\/[^\s]+$/i.test(value) && URL.canParse(value);
}
