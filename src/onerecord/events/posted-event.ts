import { Checker } from "../../domain/checker";
import { readIsoInstant } from "../../domain/instant";
import { AppError } from "../../errors";
import { CARGO, XSD } from "../jsonld-context";
import { isNode, type NodeObject, typesOf, valuesOf } from "../jsonld-tree";
import { ontologyProblems } from "../objects/ontology-validation";
import cargo from "../vocabulary/cargo.json";
import {
  EVENT_TIME_TYPES,
  type EventTimeType,
  isIataCodeListIri,
  STATUS_CODE_PREFIX,
  statusCodeLabelOf,
} from "./status-codes";

/**
 * A logistics event a client POSTs (its body read into an expanded tree by jsonld-codec.ts), checked
 * against what the specification and the cargo ontology require of one: a LogisticsEvent (or
 * subclass), exactly one xsd:dateTime eventDate, at most one eventCode — a member when it is in one of
 * IATA's code lists, a StatusCode member on a StatusUpdateEvent — at most one eventTimeType of
 * EventTimeType, for the object it is posted to, and the ontology's ranges and cardinalities
 * (objects/ontology-validation.ts). Every problem is reported at once, each naming
 * its property by IRI.
 */
export interface PostedEvent {
  /** The tree, without @id, eventFor and creationDate (the server gives those); a StatusUpdateEvent typed LogisticsEvent too. */
  readonly node: NodeObject;
  /** The most specific class given: StatusUpdateEvent or LogisticsEvent (the Type header). */
  readonly type: string;
  readonly eventDate: Date;
  /** The eventCode's IRI, and its StatusCode label when it is a member. */
  readonly codeIri: string | null;
  readonly statusCode: string | null;
  readonly timeType: EventTimeType | undefined;
  /** The client's own id for the event (its @id, a blank node's label aside): its idempotency key. */
  readonly clientId: string | null;
  /** The @id of eventLocation and transportMovementReference, when given (a milestone's station and flight). */
  readonly locationUri: string | null;
  readonly transportMovementUri: string | null;
}

export const LOGISTICS_EVENT = `${CARGO}LogisticsEvent`;
export const STATUS_UPDATE_EVENT = `${CARGO}StatusUpdateEvent`;
export const SHIPMENT = `${CARGO}Shipment`;
const P = {
  eventDate: `${CARGO}eventDate`,
  creationDate: `${CARGO}creationDate`,
  eventCode: `${CARGO}eventCode`,
  eventTimeType: `${CARGO}eventTimeType`,
  eventFor: `${CARGO}eventFor`,
  eventLocation: `${CARGO}eventLocation`,
  transportMovementReference: `${CARGO}transportMovementReference`,
};
/** Fields without a property: the node itself. */
const NODE = "@type";

/** LogisticsEvent and its subclasses in cargo 3.3. */
const EVENT_CLASSES = new Set(
  Object.entries(cargo.classes as Record<string, { superClasses: string[] }>)
    .filter(([iri]) => iri === LOGISTICS_EVENT || isSubclassOf(iri, LOGISTICS_EVENT))
    .map(([iri]) => iri),
);

function isSubclassOf(iri: string, ancestor: string, seen = new Set<string>()): boolean {
  const supers = (cargo.classes as Record<string, { superClasses: string[] }>)[iri]?.superClasses ?? [];
  return supers.some((s) => s === ancestor || (!seen.has(s) && seen.add(s) && isSubclassOf(s, ancestor, seen)));
}

/** What the event is posted to. */
export interface EventTarget {
  readonly uri: string;
  /** The object's most specific class (IRI). */
  readonly type: string;
}

export function readPostedEvent(root: NodeObject, target: EventTarget): PostedEvent {
  const check = new Checker();
  const types = typesOf(root);
  const eventTypes = types.filter((t) => EVENT_CLASSES.has(t));
  if (eventTypes.length === 0)
    check.fail(
      NODE,
      `must be a ${LOGISTICS_EVENT} (or a subclass, such as ${STATUS_UPDATE_EVENT}), got ${describeTypes(types)}`,
    );
  const isStatusUpdate = types.includes(STATUS_UPDATE_EVENT);
  const eventDate = dateOf(check, root);
  const { codeIri, statusCode } = codeOf(check, root, isStatusUpdate);
  const timeType = timeTypeOf(check, root);
  const eventFor = valuesOf(root, P.eventFor);
  if (eventFor.some((v) => v["@id"] !== target.uri))
    check.fail(P.eventFor, `must be the object the event is posted to, ${target.uri} (or be left out)`);
  if (isStatusUpdate && target.type !== SHIPMENT)
    check.fail(NODE, `a ${STATUS_UPDATE_EVENT} is for a Shipment; ${target.uri} is a ${target.type}`);
  // The ontology's ranges and cardinalities, where the checks above have not already named the property.
  const named = new Set(check.problems.map((problem) => problem.field));
  for (const problem of ontologyProblems(root))
    if (!named.has(problem.field)) check.fail(problem.field, problem.message);
  if (!check.ok)
    throw new AppError("INVALID_LOGISTICS_OBJECT", "The body is not a valid logistics event", {
      errors: check.problems,
    });
  const node: NodeObject = { ...root };
  // A 3.2 client knows no StatusUpdateEvent: it is also a LogisticsEvent, as the milestones are.
  if (isStatusUpdate && !types.includes(LOGISTICS_EVENT)) node["@type"] = [...types, LOGISTICS_EVENT];
  const id = node["@id"];
  delete node["@id"];
  delete node[P.eventFor];
  delete node[P.creationDate];
  return {
    node,
    type: isStatusUpdate ? STATUS_UPDATE_EVENT : (eventTypes[0] ?? LOGISTICS_EVENT),
    eventDate: eventDate!,
    codeIri,
    statusCode,
    timeType,
    clientId: typeof id === "string" && !id.startsWith("_:") ? id : null,
    locationUri: referenceOf(root, P.eventLocation),
    transportMovementUri: referenceOf(root, P.transportMovementReference),
  };
}

function dateOf(check: Checker, root: NodeObject): Date | undefined {
  const values = valuesOf(root, P.eventDate);
  if (values.length !== 1) {
    check.fail(
      P.eventDate,
      `is required, once: when the event occurred, an xsd:dateTime (got ${values.length} values)`,
    );
    return undefined;
  }
  const [value] = values;
  const text = value?.["@value"];
  if (value?.["@type"] !== `${XSD}dateTime` || typeof text !== "string") {
    check.fail(
      P.eventDate,
      `must be an ${XSD}dateTime literal, e.g. {"@type": "xsd:dateTime", "@value": "2026-10-16T15:45:00Z"}`,
    );
    return undefined;
  }
  const read = readIsoInstant(text);
  if ("problem" in read) {
    check.fail(P.eventDate, `${read.problem}, got ${JSON.stringify(text)}`);
    return undefined;
  }
  return read.at;
}

function codeOf(
  check: Checker,
  root: NodeObject,
  isStatusUpdate: boolean,
): { codeIri: string | null; statusCode: string | null } {
  const values = valuesOf(root, P.eventCode);
  if (values.length === 0) return { codeIri: null, statusCode: null };
  const iri = values[0]?.["@id"];
  if (values.length > 1 || typeof iri !== "string" || iri.startsWith("_:")) {
    check.fail(P.eventCode, "must be one code list member, named by its IRI");
    return { codeIri: null, statusCode: null };
  }
  const statusCode = statusCodeLabelOf(iri) ?? null;
  if (statusCode === null && (iri.startsWith(STATUS_CODE_PREFIX) || isStatusUpdate))
    check.fail(P.eventCode, `${iri} is not a member of StatusCode (${STATUS_CODE_PREFIX}DEP, …)`);
  else if (statusCode === null && isIataCodeListIri(iri))
    check.fail(P.eventCode, `${iri} is in IATA's code lists, but not a member this server knows`);
  return { codeIri: iri, statusCode };
}

function timeTypeOf(check: Checker, root: NodeObject): EventTimeType | undefined {
  const values = valuesOf(root, P.eventTimeType);
  if (values.length === 0) return undefined;
  const iri = values[0]?.["@id"];
  const label = typeof iri === "string" && iri.startsWith(CARGO) ? iri.slice(CARGO.length) : undefined;
  if (values.length === 1 && (EVENT_TIME_TYPES as readonly string[]).includes(label ?? ""))
    return label as EventTimeType;
  check.fail(P.eventTimeType, `must be one of ${EVENT_TIME_TYPES.map((t) => `cargo:${t}`).join(", ")}`);
  return undefined;
}

function referenceOf(root: NodeObject, property: string): string | null {
  const [value] = valuesOf(root, property);
  const id = isNode(value) ? value["@id"] : undefined;
  return typeof id === "string" && !id.startsWith("_:") ? id : null;
}

function describeTypes(types: readonly string[]): string {
  return types.length === 0 ? "no @type" : types.join(", ");
}
