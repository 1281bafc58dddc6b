import { AppError } from "../errors";

/**
 * What one JSON-LD body may cost before the `jsonld` library reads it. Its algorithms are far from
 * linear in the body (a scoped context is re-processed at every use; each node is copied several
 * times), and they run on the event loop: an unbounded body stalls every request of the process. A
 * linear walk of the parsed JSON refuses, before any of that, what no ONE Record client sends.
 * docs/ONE-RECORD.md "Protocol" lists these limits.
 */

/** Nesting of JSON objects and arrays, in levels (the body itself is level 1). */
export const MAX_JSON_LD_DEPTH = 24;
/** JSON objects in one body (node objects, values, term definitions, contexts). */
export const MAX_JSON_LD_OBJECTS = 1_000;
/** JSON values of any kind in one body (objects, arrays, strings, numbers, booleans, nulls). */
export const MAX_JSON_LD_VALUES = 10_000;
/** Term definitions over every @context of one body (the server's own context has 23). */
export const MAX_CONTEXT_TERMS = 200;

/** The keywords a context may set besides terms. */
const CONTEXT_KEYWORDS = new Set(["@vocab", "@base", "@language", "@version"]);
/** What a term definition may say: a simple one, never a scoped context, @reverse or @nest. */
const TERM_DEFINITION_KEYS = new Set(["@id", "@type", "@container"]);
const CONTAINERS = new Set(["@set", "@list", "@language", "@index"]);

/**
 * Refuses a body over the limits above, with a context other than term → IRI and simple term
 * definitions (inline; remote ones are refused by the codec), or with a string no database stores
 * (a NUL character, a lone UTF-16 surrogate) or the specification forbids (a Unicode non-character).
 */
export function checkJsonLdBounds(body: unknown): void {
  let objects = 0;
  let values = 0;
  let terms = 0;
  const visit = (value: unknown, depth: number, property: string | undefined): void => {
    if (++values > MAX_JSON_LD_VALUES)
      throw tooCostly(`it has more than ${MAX_JSON_LD_VALUES} JSON values (MAX_JSON_LD_VALUES)`);
    if (typeof value === "string") return checkText(value, property);
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
      checkText(key, property);
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

function tooCostly(why: string): AppError {
  return new AppError("INVALID_JSON_LD", `The body is more than this server reads in one request: ${why}`);
}

function unreadableContext(why: string): AppError {
  return new AppError("INVALID_JSON_LD", `The body's @context is not one this server reads: ${why}`);
}
