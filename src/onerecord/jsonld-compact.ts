import { ONE_RECORD_CONTEXT } from "./jsonld-context";
import type { NodeObject } from "./jsonld-tree";

/**
 * JSON-LD compaction with the server's own context, for the trees the server itself builds: the same
 * result as jsonld.js's compact() (test/onerecord/jsonld-compact.test.ts compares the two), at a small
 * fraction of its cost (jsonld.js spends about 0.1 ms per node, which made a large answer a long
 * stretch of the event loop). The context has only prefixes and typed terms; a tree using anything
 * else (lists, languages, an index, a typed term holding another type, an empty array) is left to
 * jsonld.js: `compactTree` answers undefined for it.
 */

interface Prefix {
  readonly term: string;
  readonly iri: string;
}

/** The context's prefixes (a term whose IRI ends in # or /), and its typed terms by their IRI. */
const { prefixes, typedTerms, termNames } = readContext(ONE_RECORD_CONTEXT);

/** Raised inside the walk for what only jsonld.js compacts. */
class NotSimple extends Error {}

/** The tree compacted, without its @context; undefined when jsonld.js must do it. */
export function compactTree(node: NodeObject): Record<string, unknown> | undefined {
  // jsonld.js drops a top-level node that says nothing but its @id.
  if (Object.keys(node).every((key) => key === "@id")) return undefined;
  try {
    return compactNode(node);
  } catch (error) {
    if (error instanceof NotSimple) return undefined;
    throw error;
  }
}

function compactNode(node: NodeObject): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node).sort()) {
    const value = node[key];
    if (key === "@id") {
      out["@id"] = compactIri(value as string);
      continue;
    }
    if (key === "@type") {
      const types = (value as string[]).map(compactIri);
      out["@type"] = types.length === 1 ? types[0] : types;
      continue;
    }
    if (key.startsWith("@") || !Array.isArray(value) || value.length === 0) throw new NotSimple();
    const typed = typedTerms.get(key);
    const values = value.map((item) => compactValue(item, typed));
    out[typed?.term ?? compactIri(key)] = values.length === 1 ? values[0] : values;
  }
  return out;
}

function compactValue(item: unknown, typed: { term: string; type: string } | undefined): unknown {
  if (item === null || typeof item !== "object" || Array.isArray(item)) throw new NotSimple();
  const value = item as Record<string, unknown>;
  if (!("@value" in value)) {
    // A node: a typed term takes none (jsonld.js would write its key in full).
    if (typed) throw new NotSimple();
    const keys = Object.keys(value);
    if (keys.length === 1 && keys[0] === "@id") return { "@id": compactIri(value["@id"] as string) };
    return compactNode(value);
  }
  const keys = Object.keys(value);
  const literal = value["@value"];
  if (typeof literal === "object" && literal !== null) throw new NotSimple();
  if (keys.length === 1) {
    if (typed) throw new NotSimple();
    return literal;
  }
  if (keys.length !== 2 || typeof value["@type"] !== "string") throw new NotSimple();
  if (typed) {
    if (value["@type"] !== typed.type) throw new NotSimple();
    return literal;
  }
  return { "@type": compactIri(value["@type"]), "@value": literal };
}

/** An IRI as prefix:suffix when a prefix of the context starts it, else as it is. */
function compactIri(iri: string): string {
  if (typeof iri !== "string") throw new NotSimple();
  for (const { term, iri: start } of prefixes) {
    if (iri.length > start.length && iri.startsWith(start)) {
      const compact = `${term}:${iri.slice(start.length)}`;
      // A compact IRI that is also a term means that term; jsonld.js then decides by the value.
      if (termNames.has(compact) && typedTerms.get(iri)?.term !== compact) throw new NotSimple();
      return compact;
    }
  }
  if (termNames.has(iri)) throw new NotSimple();
  return iri;
}

function readContext(context: Readonly<Record<string, unknown>>) {
  const prefixList: Prefix[] = [];
  for (const [term, definition] of Object.entries(context))
    if (typeof definition === "string" && /[#/]$/.test(definition)) prefixList.push({ term, iri: definition });
  const expand = (name: string): string => {
    const colon = name.indexOf(":");
    const prefix = colon < 0 ? undefined : prefixList.find((p) => p.term === name.slice(0, colon));
    return prefix ? `${prefix.iri}${name.slice(colon + 1)}` : name;
  };
  const typed = new Map<string, { term: string; type: string }>();
  for (const [term, definition] of Object.entries(context)) {
    if (typeof definition !== "object" || definition === null) continue;
    const keys = Object.keys(definition);
    const type = (definition as { "@type"?: unknown })["@type"];
    // Only "prefix:name": { "@type": … } terms are read here; the context has no other kind.
    if (keys.length !== 1 || typeof type !== "string" || !term.includes(":"))
      throw new Error(`jsonld-compact.ts reads no term definition like ${term}`);
    typed.set(expand(term), { term, type: expand(type) });
  }
  return { prefixes: prefixList, typedTerms: typed, termNames: new Set(Object.keys(context)) };
}
