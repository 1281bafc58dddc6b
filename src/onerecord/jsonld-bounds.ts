import { AppError } from "../errors";

/**
 * What one JSON-LD body may cost. The `jsonld` library's algorithms run on the event loop, so every
 * request of the process waits for them; these limits keep the whole request of the costliest body
 * they admit (reading, validation, storing, answering) within about 50 ms of CPU, measured by
 * test/onerecord/jsonld-worst-case.test.ts. A linear walk of the parsed JSON checks all but the last
 * before any JSON-LD processing; a linear walk of the expanded body checks the last before
 * flattening. docs/ONE-RECORD.md "Protocol" lists them.
 */

/** Nesting of JSON objects and arrays, in levels (the body itself is level 1). */
export const MAX_JSON_LD_DEPTH = 24;
/** JSON objects in one body (node objects, values, term definitions, contexts). */
export const MAX_JSON_LD_OBJECTS = 500;
/** JSON values of any kind in one body (objects, arrays, strings, numbers, booleans, nulls). */
export const MAX_JSON_LD_VALUES = 5_000;
/** Keys of every JSON object of one body together: each names a term to expand and a property to fill. */
export const MAX_JSON_LD_KEYS = 1_000;
/** Characters of every string and key of one body together (storing text costs by its length). */
export const MAX_JSON_LD_TEXT = 320 * 1024;
/** Term definitions over every @context of one body (the server's own context has 23). */
export const MAX_CONTEXT_TERMS = 200;
/**
 * The one step of reading that is not linear: flattening compares each value of a property of a node
 * with every value the node already holds there (its @type list too; a node mentioned twice merges
 * both mentions), n × (n − 1) / 2 comparisons for n values. Over the whole body, at most this many:
 * one property may hold 500 values, or 50 properties 71 each.
 */
export const MAX_JSON_LD_MERGE_COMPARISONS = 125_000;
/** The most values one property of one node may hold (with nothing else to compare). */
export const MAX_JSON_LD_VALUES_PER_PROPERTY = Math.floor((1 + Math.sqrt(1 + 8 * MAX_JSON_LD_MERGE_COMPARISONS)) / 2);

/** The keywords a context may set besides terms. */
const CONTEXT_KEYWORDS = new Set(["@vocab", "@base", "@language", "@version"]);
/** What a term definition may say: a simple one, never a scoped context, @reverse or @nest. */
const TERM_DEFINITION_KEYS = new Set(["@id", "@type", "@container"]);
// Not @list: ONE Record's properties hold sets, and an object stores no RDF list (checkExpandedBody).
const CONTAINERS = new Set(["@set", "@language", "@index"]);

/**
 * Refuses a body over the limits above, with a context other than term → IRI and simple term
 * definitions (inline; remote ones are refused by the codec), or with a string no database stores
 * (a NUL character, a lone UTF-16 surrogate) or the specification forbids (a Unicode non-character).
 */
export function checkJsonLdBounds(body: unknown): void {
  let objects = 0;
  let values = 0;
  let keys = 0;
  let text = 0;
  let terms = 0;
  const countText = (string: string, property: string | undefined) => {
    text += string.length;
    if (text > MAX_JSON_LD_TEXT)
      throw tooCostly(`its strings and keys hold more than ${MAX_JSON_LD_TEXT} characters (MAX_JSON_LD_TEXT)`);
    checkText(string, property);
  };
  const visit = (value: unknown, depth: number, property: string | undefined): void => {
    if (++values > MAX_JSON_LD_VALUES)
      throw tooCostly(`it has more than ${MAX_JSON_LD_VALUES} JSON values (MAX_JSON_LD_VALUES)`);
    if (typeof value === "string") return countText(value, property);
    if (value === null || typeof value !== "object") return;
    if (depth > MAX_JSON_LD_DEPTH)
      throw tooCostly(`it nests objects and arrays deeper than ${MAX_JSON_LD_DEPTH} levels (MAX_JSON_LD_DEPTH)`);
    if (Array.isArray(value)) {
      for (const item of value) visit(item, depth + 1, property);
      return;
    }
    if (++objects > MAX_JSON_LD_OBJECTS)
      throw tooCostly(`it has more than ${MAX_JSON_LD_OBJECTS} JSON objects (MAX_JSON_LD_OBJECTS)`);
    for (const [key, inner] of Object.entries(value)) {
      if (++keys > MAX_JSON_LD_KEYS)
        throw tooCostly(`its objects have more than ${MAX_JSON_LD_KEYS} keys together (MAX_JSON_LD_KEYS)`);
      countText(key, property);
      if (key === "@context") {
        terms += checkContext(inner);
        if (terms > MAX_CONTEXT_TERMS)
          throw tooCostly(`its contexts define more than ${MAX_CONTEXT_TERMS} terms (MAX_CONTEXT_TERMS)`);
      }
      visit(inner, depth + 1, key.startsWith("@") ? property : key);
    }
  };
  visit(body, 1, undefined);
}

/** The number of terms a @context value defines; refuses any form but inline term → IRI maps. */
function checkContext(context: unknown): number {
  if (context === null) return 0;
  if (Array.isArray(context)) return context.reduce((sum: number, item: unknown) => sum + checkContext(item), 0);
  // A string is a remote context: the codec refuses it, naming it.
  if (typeof context === "string") return 0;
  if (typeof context !== "object") throw unreadableContext("a @context is an object of term definitions");
  let terms = 0;
  for (const [term, definition] of Object.entries(context)) {
    if (term.startsWith("@")) {
      if (!CONTEXT_KEYWORDS.has(term))
        throw unreadableContext(`${term} in a @context is not supported (only ${[...CONTEXT_KEYWORDS].join(", ")})`);
      continue;
    }
    terms++;
    if (definition === null || typeof definition === "string") continue;
    if (typeof definition !== "object" || Array.isArray(definition))
      throw unreadableContext(`the term ${term} is defined by neither an IRI nor a term definition`);
    for (const [key, inner] of Object.entries(definition as Record<string, unknown>)) {
      if (!TERM_DEFINITION_KEYS.has(key))
        throw unreadableContext(
          `the term ${term} uses ${key}: a term definition may only give @id, @type and @container (no scoped context)`,
        );
      const containers = key === "@container" && Array.isArray(inner) ? inner : [inner];
      if (containers.some((item) => typeof item !== "string" || (key === "@container" && !CONTAINERS.has(item))))
        throw unreadableContext(
          `the term ${term} has a ${key} this server does not read (${key === "@container" ? [...CONTAINERS].join(", ") : "an IRI"})`,
        );
    }
  }
  return terms;
}

// A NUL, or half of a surrogate pair with no other half (with the u flag a whole pair is one code
// point, which the class does not match): text no UTF-8 database column holds.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

// Unicode's non-characters (U+FDD0–U+FDEF and the last two code points of every plane), which the
// specification's "Content Encoding" forbids in a body.
const NON_CHARACTER = new RegExp(
  `[\\uFDD0-\\uFDEF${Array.from({ length: 17 }, (_, plane) => `\\u{${plane.toString(16)}FFFE}\\u{${plane.toString(16)}FFFF}`).join("")}]`,
  "u",
);

function checkText(text: string, property: string | undefined): void {
  if (!text.includes("\u0000") && !LONE_SURROGATE.test(text) && !NON_CHARACTER.test(text)) return;
  const message = "holds a NUL character, a lone UTF-16 surrogate or a Unicode non-character, which no text may";
  if (property === undefined) throw new AppError("INVALID_JSON_LD", `The body ${message}`);
  throw new AppError("INVALID_JSON_LD", `${property} ${message}`, { errors: [{ field: property, message }] });
}

/**
 * Refuses an expanded body holding an RDF list (@list, from the keyword or a term's container), which
 * no ONE Record property takes and no object stores, or one whose flattening would make more than
 * MAX_JSON_LD_MERGE_COMPARISONS. It counts what jsonld's node map merges, keyed as it keys nodes (by @id; a
 * node without one on its own; a named graph's nodes with the default graph's, which counts more,
 * never less).
 */
export function checkExpandedBody(expanded: unknown): void {
  const counts = new Map<string, Map<string, number>>();
  let anonymous = 0;
  const count = (node: string, property: string, added: number) => {
    let properties = counts.get(node);
    if (properties === undefined) counts.set(node, (properties = new Map<string, number>()));
    properties.set(property, (properties.get(property) ?? 0) + added);
  };
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (value === null || typeof value !== "object" || "@value" in value) return;
    if ("@list" in value)
      throw new AppError(
        "INVALID_JSON_LD",
        "The body holds an @list (or a term whose @container is @list): ONE Record properties hold sets of values; send an array",
      );
    const node = value as Record<string, unknown>;
    const id = typeof node["@id"] === "string" ? node["@id"] : `#${anonymous++}`;
    for (const [key, inner] of Object.entries(node)) {
      if (key === "@reverse" && inner !== null && typeof inner === "object") {
        // Each node under a reverse property gets this node as a value of that property.
        for (const [property, items] of Object.entries(inner))
          for (const item of Array.isArray(items) ? items : [items]) {
            const itemId = (item as Record<string, unknown> | null)?.["@id"];
            count(typeof itemId === "string" ? itemId : `#${anonymous++}`, property, 1);
            visit(item);
          }
      } else if (key === "@graph" || key === "@included") visit(inner);
      else if (Array.isArray(inner) && (key === "@type" || !key.startsWith("@"))) {
        count(id, key, inner.length);
        if (key !== "@type") visit(inner);
      }
    }
  };
  visit(expanded);
  let comparisons = 0;
  let worst = { property: "", values: 0 };
  for (const properties of counts.values())
    for (const [property, values] of properties) {
      comparisons += (values * (values - 1)) / 2;
      if (values > worst.values) worst = { property, values };
    }
  if (comparisons > MAX_JSON_LD_MERGE_COMPARISONS)
    throw tooCostly(
      `flattening it would compare ${comparisons} pairs of values of one property of one node, over ` +
        `${MAX_JSON_LD_MERGE_COMPARISONS} (MAX_JSON_LD_MERGE_COMPARISONS: one property holds at most ` +
        `${MAX_JSON_LD_VALUES_PER_PROPERTY} values); the most are ${worst.values} values of ${worst.property.slice(0, 200)}`,
    );
}

function tooCostly(why: string): AppError {
  return new AppError("INVALID_JSON_LD", `The body is more than this server reads in one request: ${why}`);
}

function unreadableContext(why: string): AppError {
  return new AppError("INVALID_JSON_LD", `The body's @context is not one this server reads: ${why}`);
}
