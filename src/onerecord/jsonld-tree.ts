import { randomUUID } from "node:crypto";

/**
 * Expanded JSON-LD trees, as bodies are stored: a node object maps "@id", "@type" (an array of IRIs)
 * and property IRIs (each an array of values: a literal {"@value", "@type"?}, a reference {"@id"} or
 * an embedded node). Pure functions over them; the `jsonld` library is only in jsonld-codec.ts.
 */
export type NodeObject = Record<string, unknown>;
export type JsonLdValue = Record<string, unknown>;

/** The values of a property (none: an empty array). */
export function valuesOf(node: NodeObject, property: string): JsonLdValue[] {
  const values = node[property];
  return Array.isArray(values) ? (values as JsonLdValue[]) : [];
}

export function typesOf(node: NodeObject): string[] {
  const types = node["@type"];
  return Array.isArray(types) ? (types as string[]) : typeof types === "string" ? [types] : [];
}

/** The first literal value of a property, as text; undefined without one. */
export function literalOf(node: NodeObject, property: string): string | undefined {
  const value = valuesOf(node, property).find((v) => "@value" in v)?.["@value"];
  return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : undefined;
}

export function isNode(value: unknown): value is NodeObject {
  return value !== null && typeof value === "object" && !Array.isArray(value) && !("@value" in value);
}

/** A bare reference: {"@id"} and nothing else. */
export function isReference(value: unknown): value is { "@id": string } {
  return isNode(value) && Object.keys(value).length === 1 && typeof value["@id"] === "string";
}

/** Every node of the tree, the root first (embedded nodes, not references). */
export function nodesOf(root: NodeObject): NodeObject[] {
  const nodes: NodeObject[] = [];
  const seen = new Set<NodeObject>();
  const visit = (node: NodeObject) => {
    if (seen.has(node)) throw new TypeError("A JSON-LD tree that contains itself");
    seen.add(node);
    nodes.push(node);
    for (const [key, values] of Object.entries(node)) {
      if (key.startsWith("@") || !Array.isArray(values)) continue;
      for (const value of values) if (isNode(value) && !isReference(value)) visit(value);
    }
  };
  visit(root);
  return nodes;
}

/** A deep copy with every "@id" mapped (references and nodes alike); undefined from `map` keeps the id. */
export function mapIds(node: NodeObject, map: (id: string) => string | undefined): NodeObject {
  // A tree read from JSON has no cycles; one built in memory might: refused, not a stack overflow.
  const ancestors = new Set<object>();
  const copy = (value: unknown): unknown => {
    if (value === null || typeof value !== "object") return value;
    if (ancestors.has(value)) throw new TypeError("A JSON-LD tree that contains itself");
    ancestors.add(value);
    let out: unknown;
    if (Array.isArray(value)) out = value.map(copy);
    else {
      const fields: Record<string, unknown> = {};
      for (const [key, inner] of Object.entries(value)) {
        if (key === "@id" && typeof inner === "string") fields[key] = map(inner) ?? inner;
        else if (key === "@value" || key === "@type") fields[key] = inner;
        else fields[key] = copy(inner);
      }
      out = fields;
    }
    ancestors.delete(value);
    return out;
  };
  return copy(node) as NodeObject;
}

/** The ids of stored bodies name this server's objects by local id: anything without a scheme. */
export function isLocalId(id: string): boolean {
  return !id.includes(":");
}

/**
 * Names the body's blank nodes with the specification's embedded object ids ("internal:<uuid>"), made
 * by the server: a change can name them, they never change once stored, and no two bodies share one
 * whatever labels the client gave. A blank node is one without @id, with a label ("_:b0") or with an
 * "internal:" id, which only this server makes (a client's could name another object's node). A node
 * with any other IRI (another server's object, a code-list element, an ontology individual such as
 * cargo:ACTUAL) keeps it. Returns the labels given in the body with the ids they got; a label given
 * twice keeps one id, and references to it follow.
 *
 * With `ownObjects`, a node naming one of this server's objects is a link when it says no more than
 * @id and @type (its @type dropped: the type is the object's to say), and refused otherwise: a body
 * may not redefine another object under its URI.
 */
export function nameEmbeddedNodes(
  root: NodeObject,
  ownObjects?: { isOwn(id: string): boolean; refuse(id: string): Error },
): Map<string, string> {
  const named = new Map<string, string>();
  const made = new Set<string>();
  const nameOf = (label?: string) => {
    const id = (label === undefined ? undefined : named.get(label)) ?? newEmbeddedId();
    if (label !== undefined) named.set(label, id);
    made.add(id);
    return id;
  };
  for (const node of nodesOf(root).slice(1)) {
    const id = node["@id"];
    if (typeof id !== "string") node["@id"] = nameOf();
    else if (isBlankLabel(id)) node["@id"] = nameOf(id);
    else if (ownObjects?.isOwn(id)) {
      if (!Object.keys(node).every((key) => key === "@id" || key === "@type")) throw ownObjects.refuse(id);
      delete node["@type"];
    }
  }
  // References to a blank node elsewhere in the tree follow it; a label only referred to gets one too.
  const rootId = root["@id"];
  const renamed = mapIds(root, (id) => (id === rootId || made.has(id) || !isBlankLabel(id) ? undefined : nameOf(id)));
  for (const key of Object.keys(root)) delete root[key];
  Object.assign(root, renamed);
  return named;
}

/** An id that names a node of one body only: a blank node label, or an embedded id this server made. */
export function isBlankLabel(id: string): boolean {
  return id.startsWith("_:") || id.startsWith("internal:");
}

export function newEmbeddedId(): string {
  return `internal:${randomUUID()}`;
}
