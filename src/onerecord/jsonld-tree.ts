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
 * The specification's embedded object ids ("internal:<uuid>"), made by the server, for every embedded
 * node: a change can name them, they never change once stored, and no two bodies share one whatever
 * ids the client gave (a client's id could name another object's node, or this server's object).
 * Returns the ids given in the body with the ids they got; a node given twice keeps one id.
 */
export function nameEmbeddedNodes(root: NodeObject): Map<string, string> {
  const named = new Map<string, string>();
  for (const node of nodesOf(root).slice(1)) {
    const id = node["@id"];
    const embeddedId = (typeof id === "string" ? named.get(id) : undefined) ?? newEmbeddedId();
    if (typeof id === "string") named.set(id, embeddedId);
    node["@id"] = embeddedId;
  }
  if (named.size > 0) {
    // References to a renamed node elsewhere in the tree follow it.
    const renamed = mapIds(root, (id) => named.get(id));
    for (const key of Object.keys(root)) delete root[key];
    Object.assign(root, renamed);
  }
  return named;
}

export function newEmbeddedId(): string {
  return `internal:${randomUUID()}`;
}
