import {
  MAX_CONTEXT_TERMS,
  MAX_JSON_LD_DEPTH,
  MAX_JSON_LD_KEYS,
  MAX_JSON_LD_MERGE_COMPARISONS,
  MAX_JSON_LD_OBJECTS,
  MAX_JSON_LD_TEXT,
  MAX_JSON_LD_VALUES,
} from "../../src/onerecord/jsonld-bounds";

/**
 * The costliest JSON-LD bodies the bounds admit (src/onerecord/jsonld-bounds.ts), one per way a body
 * can cost: each spends what a route's own body leaves of one bound (or two) to the last unit. They
 * are properties added to a body a route reads; test/onerecord/jsonld-worst-case.test.ts measures them
 * on every route, and checks that each is at its bound (a tenth more is refused).
 */

export const EX = "https://example.com/ns#";
export type Json = Record<string, unknown>;

/** What a JSON body uses of each bound, counted as jsonld-bounds.ts counts. */
export interface Usage {
  depth: number;
  objects: number;
  values: number;
  keys: number;
  text: number;
}

export function usageOf(body: unknown): Usage {
  const usage: Usage = { depth: 0, objects: 0, values: 0, keys: 0, text: 0 };
  const visit = (value: unknown, depth: number): void => {
    usage.values++;
    usage.depth = Math.max(usage.depth, depth);
    if (typeof value === "string") usage.text += value.length;
    if (value === null || typeof value !== "object") return;
    if (Array.isArray(value)) return value.forEach((item) => visit(item, depth + 1));
    usage.objects++;
    for (const [key, inner] of Object.entries(value)) {
      usage.keys++;
      usage.text += key.length;
      visit(inner, depth + 1);
    }
  };
  visit(body, 1);
  return usage;
}

/**
 * What is left of each bound once `base` is counted (its merge cost and context terms are left a
 * margin: the bodies routes read spend a few), each multiplied by `scale`.
 */
export interface Budget extends Usage {
  merge: number;
  terms: number;
}

export function budgetAfter(base: Json, scale = 1): Budget {
  const used = usageOf(base);
  const left = (bound: number, spent: number) => Math.floor((bound - spent) * scale);
  return {
    // The levels a shape's value may take, its innermost string counted (the bound counts objects and
    // arrays, the root as level 1): a base nests less deep than the bound.
    depth: MAX_JSON_LD_DEPTH + (scale > 1 ? 1 : 0),
    objects: left(MAX_JSON_LD_OBJECTS, used.objects),
    values: left(MAX_JSON_LD_VALUES, used.values),
    keys: left(MAX_JSON_LD_KEYS, used.keys),
    text: left(MAX_JSON_LD_TEXT, used.text),
    merge: left(MAX_JSON_LD_MERGE_COMPARISONS, 100),
    terms: left(MAX_CONTEXT_TERMS, 30),
  };
}

/** A shape: what it adds to a body (its @context merged into the body's, its @type added to the body's). */
export type Shape = (budget: Budget) => Json;

const range = (n: number) => Array.from({ length: Math.max(0, n) }, (_, i) => i);
/** The most values one property may hold for `comparisons` merge comparisons: n × (n − 1) / 2 of them. */
const valuesFor = (comparisons: number) => Math.floor((1 + Math.sqrt(1 + 8 * comparisons)) / 2);
const key = (i: number) => `ex:p${i}`;
/** Characters one property spends of the text bound with a value of `value` characters. */
const keyed = (i: number, value: number) => key(i).length + value;

/**
 * Every shape, by the cost it aims at. Each spends its budget to the last unit on one bound, so that
 * the test can also build it a tenth larger (budgetAfter's `scale`) and see it refused.
 */
export const WORST_SHAPES: Record<string, Shape> = {
  /** Distinct properties of the root, one short value each: keys are the costliest units to read and store. */
  keys: (b) => Object.fromEntries(range(Math.min(b.keys, b.values / 2)).map((i) => [key(i), "v"])),
  /** The same spread over ten embedded nodes. */
  keysInNodes: (b) => ({
    "ex:n": range(10).map((n) =>
      Object.fromEntries(
        range(Math.floor((Math.min(b.keys, b.values / 2) - 11) / 10)).map((i) => [`ex:n${n}p${i}`, "v"]),
      ),
    ),
  }),
  /** Every value the body may hold, twenty to a property (190 merge comparisons each). */
  values: (b) => {
    const properties = Math.min(Math.floor(b.values / 21), b.keys, Math.floor(b.merge / 190));
    return Object.fromEntries(range(properties).map((i) => [key(i), range(20).map((j) => `v${j}`)]));
  },
  /** Every key the body may hold, each with as many values as the values leave. */
  keysWithValues: (b) => {
    const each = Math.floor(b.values / b.keys) - 1;
    return Object.fromEntries(range(b.keys).map((i) => [key(i), range(each).map((j) => `v${j}`)]));
  },
  /** Every object the body may hold as embedded nodes, in ten properties, their values shared out. */
  nodes: (b) => {
    const perProperty = Math.floor((b.objects - 0) / 10);
    const each = Math.floor((b.values - 20) / (10 * perProperty)) - 3;
    return Object.fromEntries(
      range(10).map((p) => [`ex:n${p}`, range(perProperty).map(() => ({ "ex:a": range(each).map((j) => `v${j}`) }))]),
    );
  },
  /** One property at the merge comparisons' bound: the quadratic step at its largest. */
  merge: (b) => ({ "ex:m": range(valuesFor(b.merge)).map((i) => `v${i}`) }),
  /** The same with links to other objects. */
  mergeLinks: (b) => ({
    "ex:m": range(Math.min(valuesFor(b.merge), b.objects)).map((i) => ({
      "@id": `https://other.example/objects/${i}`,
    })),
  }),
  /** One blank node mentioned as often as the objects allow, each mention adding a value to one property. */
  sameNode: (b) => ({
    "ex:x": range(Math.min(b.objects, valuesFor(b.merge / 2))).map((i) => ({
      "@id": "_:same",
      "ex:a": `v${i}`,
    })),
  }),
  /** As many types as the merge comparisons allow on the root (its own type among them). */
  types: (b) => ({ "@type": range(valuesFor(b.merge) - 1).map((i) => `ex:T${i}`) }),
  /** One string as long as the text allows. */
  text: (b) => ({ "ex:t": "x".repeat(b.text - "ex:t".length) }),
  /** The text shared out over every key the body may hold. */
  textInKeys: (b) => {
    const properties = Math.min(b.keys, b.values / 2);
    const each = Math.floor(b.text / properties) - keyed(properties, 0);
    return Object.fromEntries(range(properties).map((i) => [key(i), "x".repeat(each)]));
  },
  /** Every term a context may define, and a context of its own in as many nodes as the objects allow. */
  contexts: (b) => ({
    "@context": Object.fromEntries(range(b.terms).map((i) => [`t${i}`, `${EX}t${i}`])),
    "ex:c": range(Math.floor(b.objects / 2)).map((i) => ({ "@context": { "@vocab": EX }, [`t${i % b.terms}`]: "v" })),
  }),
  /** Language-tagged values of one property through a @language container, as many as the comparisons allow. */
  languages: (b) => ({
    "@context": { l: { "@id": `${EX}l`, "@container": "@language" } },
    l: Object.fromEntries(range(Math.min(valuesFor(b.merge), b.keys)).map((i) => [`x-l${i}`, `t${i}`])),
  }),
  /** Nodes and arrays nested as deep as the depth allows, each level with a sibling. */
  deep: (b) => {
    let value: unknown = "v";
    for (let depth = 1; depth < b.depth; depth++)
      value = depth % 2 === 1 ? [value, "w"] : { "ex:d": value, "ex:w": "v" };
    return { "ex:deep": value };
  },
  /** Blank nodes that link to one another by label, as many as the objects allow. */
  labels: (b) => {
    const count = Math.floor(b.objects / 2);
    return {
      "ex:l": range(count).map((i) => ({ "@id": `_:n${i}`, "ex:next": { "@id": `_:n${(i + 1) % count}` } })),
    };
  },
};

/** The context every shape's compact IRIs use. */
export const SHAPE_CONTEXT = { ex: EX };

/**
 * `base` with `shape` added: its properties beside the base's, its context merged into the base's
 * (a shape's terms after the base's), its types after the base's.
 */
export function withShape(base: Json, shape: Json): Json {
  const { "@context": shapeContext, "@type": shapeTypes, ...properties } = shape;
  const baseContext = (base["@context"] ?? {}) as Json;
  const types = [base["@type"], shapeTypes].flat().filter((type) => type !== undefined);
  return {
    ...base,
    "@context": { ...baseContext, ...SHAPE_CONTEXT, ...(shapeContext as Json | undefined) },
    ...(types.length > 0 ? { "@type": types.length === 1 ? types[0] : types } : {}),
    ...properties,
  };
}

/**
 * The costliest body of `shape` on `base`: the shape spends what the base (with the shapes' context)
 * leaves. With `scale` 1.1 it spends a tenth more than that, which the bounds must refuse.
 */
export function worstBody(base: Json, shape: Shape, scale = 1): Json {
  return withShape(base, shape(budgetAfter(withShape(base, {}), scale)));
}
