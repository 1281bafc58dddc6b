import { AppError, type FieldError } from "../../errors";
import { API, CARGO } from "../jsonld-context";
import { type NodeObject, nodesOf, typesOf } from "../jsonld-tree";
import cargo from "../vocabulary/cargo.json";

/**
 * What the cargo ontology (3.3, src/onerecord/vocabulary/cargo.json) says a logistics object may be:
 * the classes that are LogisticsObjects, and the classes and properties that exist. Bodies are checked
 * against the terms, not against ranges or cardinalities.
 */

export const LOGISTICS_OBJECT = `${CARGO}LogisticsObject`;
/** Properties a client may not write: events are added through the events API. */
export const EVENTS = `${CARGO}events`;
const RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
/** Set by the server on every answer, never stored. */
export const HAS_REVISION = `${API}hasRevision`;
export const HAS_LATEST_REVISION = `${API}hasLatestRevision`;

const classes = cargo.classes as Record<string, { superClasses: string[] }>;
const properties = cargo.properties as Record<string, unknown>;

const depthCache = new Map<string, number | null>();

/** How many steps up to LogisticsObject (0 for itself); null when the class is not one. */
function logisticsObjectDepth(iri: string, seen: ReadonlySet<string> = new Set()): number | null {
  if (iri === LOGISTICS_OBJECT) return 0;
  const cached = depthCache.get(iri);
  if (cached !== undefined) return cached;
  const parents = classes[iri]?.superClasses ?? [];
  let best: number | null = null;
  for (const parent of parents) {
    if (seen.has(parent)) continue;
    const depth = logisticsObjectDepth(parent, new Set([...seen, iri]));
    if (depth !== null && (best === null || depth + 1 > best)) best = depth + 1;
  }
  depthCache.set(iri, best);
  return best;
}

export function isLogisticsObjectClass(iri: string): boolean {
  return logisticsObjectDepth(iri) !== null;
}

/** The most specific LogisticsObject class among `types` (the Type header); undefined when none is one. */
export function mostSpecificLogisticsObjectType(types: readonly string[]): string | undefined {
  let best: { iri: string; depth: number } | undefined;
  for (const iri of types) {
    const depth = logisticsObjectDepth(iri);
    if (depth !== null && (best === undefined || depth > best.depth)) best = { iri, depth };
  }
  return best?.iri;
}

/** Whether `iri` is `ancestor` or one of its subclasses in the cargo ontology (cargo:Company of cargo:Organization). */
export function isSubclassOf(iri: string, ancestor: string, seen: ReadonlySet<string> = new Set()): boolean {
  if (iri === ancestor) return true;
  if (seen.has(iri)) return false;
  return (classes[iri]?.superClasses ?? []).some((parent) => isSubclassOf(parent, ancestor, new Set([...seen, iri])));
}

export function isCargoClass(iri: string): boolean {
  return iri in classes;
}

export function isCargoProperty(iri: string): boolean {
  return iri in properties;
}

/**
 * Refuses a body that is not a logistics object this server can hold: its root is of no
 * LogisticsObject class, or it uses a cargo class or property the ontology does not have, an API
 * term, or the events property. Every problem is listed, the property at fault named by its IRI.
 * Answers the root's most specific LogisticsObject class.
 */
export function checkLogisticsObject(root: NodeObject): string {
  const problems: FieldError[] = [];
  const type = mostSpecificLogisticsObjectType(typesOf(root));
  if (type === undefined)
    problems.push({
      field: RDF_TYPE,
      message: `the object must be of a class of the cargo ontology that is a LogisticsObject; it is ${
        typesOf(root).join(", ") || "of no class"
      }`,
    });
  for (const node of nodesOf(root)) {
    for (const iri of typesOf(node))
      if ((iri.startsWith(CARGO) && !isCargoClass(iri)) || iri.startsWith(API))
        problems.push({ field: RDF_TYPE, message: `${iri} is not a class of the cargo ontology` });
    for (const key of Object.keys(node)) {
      if (key.startsWith("@") || (node === root && (key === HAS_REVISION || key === HAS_LATEST_REVISION))) continue;
      if (key === EVENTS)
        problems.push({
          field: key,
          message: "logistics events are posted to the object's logistics-events, not written in it",
        });
      else if ((key.startsWith(CARGO) && !isCargoProperty(key)) || key.startsWith(API))
        problems.push({ field: key, message: `${key} is not a property of the cargo ontology` });
    }
  }
  if (problems.length > 0 || type === undefined)
    throw new AppError("INVALID_LOGISTICS_OBJECT", problems.map((p) => `${p.field}: ${p.message}`).join("; "), {
      errors: problems,
    });
  return type;
}
