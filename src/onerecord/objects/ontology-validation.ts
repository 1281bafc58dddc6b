import { AppError, type FieldError } from "../../errors";
import { CARGO, XSD } from "../jsonld-context";
import { isNode, type JsonLdValue, type NodeObject, nodesOf, typesOf } from "../jsonld-tree";
import cargo from "../vocabulary/cargo.json";

/**
 * What the cargo ontology (3.3, src/onerecord/vocabulary/cargo.json) says of each property of a node
 * of a known class, its superclasses' restrictions included: a datatype property's values are literals
 * of its range, an object property's are nodes or IRIs (a node that states a type is of a class
 * compatible with the range), and a property restricted to at most one value has at most one.
 * Minimums are not checked here: where the specification asks for one (an event's eventDate) the
 * reader of that body checks it. Properties outside the cargo ontology are left to checkLogisticsObject.
 * One pass over the tree: linear in the body's size.
 */

interface Restriction {
  readonly range: string;
  readonly rangeKind: "class" | "datatype";
  readonly max?: number;
  readonly exact?: number;
}

interface CargoClass {
  readonly superClasses: readonly string[];
  readonly properties: Readonly<Record<string, Restriction>>;
}

const classes = cargo.classes as unknown as Record<string, CargoClass>;
const properties = cargo.properties as unknown as Record<string, { kind: "object" | "datatype"; range: string }>;

/** At most this many problems are reported: enough to fix a body, bounded whatever its size. */
const MAX_PROBLEMS = 20;

const ancestorsCache = new Map<string, ReadonlySet<string>>();

/** The class and every named superclass of it (cycles tolerated). */
function ancestorsOf(iri: string): ReadonlySet<string> {
  const cached = ancestorsCache.get(iri);
  if (cached) return cached;
  const found = new Set<string>();
  const stack = [iri];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (found.has(next)) continue;
    found.add(next);
    stack.push(...(classes[next]?.superClasses ?? []));
  }
  ancestorsCache.set(iri, found);
  return found;
}

const restrictionsCache = new Map<string, ReadonlyMap<string, readonly Restriction[]>>();

/** Every restriction the node's classes and their superclasses put on each property. */
function restrictionsOf(nodeTypes: readonly string[]): ReadonlyMap<string, readonly Restriction[]> {
  const types = nodeTypes.filter((type) => type in classes);
  const key = types.join(" ");
  const cached = restrictionsCache.get(key);
  if (cached) return cached;
  const merged = new Map<string, Restriction[]>();
  const classesOfNode = new Set(types.flatMap((type) => [...ancestorsOf(type)]));
  for (const iri of classesOfNode)
    for (const [property, restriction] of Object.entries(classes[iri]?.properties ?? {}))
      merged.set(property, [...(merged.get(property) ?? []), restriction]);
  // Keyed by cargo classes only; cleared should a client send many combinations of them.
  if (restrictionsCache.size > 1000) restrictionsCache.clear();
  restrictionsCache.set(key, merged);
  return merged;
}

/** The property's own rdfs:range when no class of the node restricts it. */
function globalRestriction(property: string): Restriction[] {
  const entry = properties[property];
  if (!entry) return [];
  return [{ range: entry.range, rangeKind: entry.kind === "object" ? "class" : "datatype" }];
}

/** The problems the ontology finds in the tree, each naming its property by IRI; none: valid. */
export function ontologyProblems(root: NodeObject): FieldError[] {
  const problems: FieldError[] = [];
  for (const node of nodesOf(root)) {
    const restricted = restrictionsOf(typesOf(node));
    for (const [property, values] of Object.entries(node)) {
      if (property.startsWith("@") || !Array.isArray(values) || !property.startsWith(CARGO)) continue;
      const restrictions = restricted.get(property) ?? globalRestriction(property);
      for (const restriction of restrictions) {
        const problem = problemOf(restriction, values as JsonLdValue[]);
        if (problem !== undefined) {
          problems.push({ field: property, message: problem });
          break;
        }
      }
      if (problems.length >= MAX_PROBLEMS) return problems;
    }
  }
  return problems;
}

/** Refuses (400 INVALID_LOGISTICS_OBJECT) a tree the ontology's ranges or cardinalities do not allow. */
export function checkOntology(root: NodeObject): void {
  const problems = ontologyProblems(root);
  if (problems.length > 0)
    throw new AppError(
      "INVALID_LOGISTICS_OBJECT",
      `The body does not fit the cargo ontology: ${problems.map((p) => `${p.field} ${p.message}`).join("; ")}`,
      { errors: problems },
    );
}

function problemOf(restriction: Restriction, values: readonly JsonLdValue[]): string | undefined {
  const max = restriction.exact ?? restriction.max;
  if (max !== undefined && values.length > max)
    return `takes at most ${max} value${max === 1 ? "" : "s"}, got ${values.length}`;
  for (const value of values) {
    if ("@list" in value) continue;
    const problem =
      restriction.rangeKind === "datatype"
        ? literalProblem(restriction.range, value)
        : objectProblem(restriction.range, value);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

function objectProblem(range: string, value: JsonLdValue): string | undefined {
  if (!isNode(value))
    return `must be a node or an IRI ({"@id": …}) of ${range}, got the literal ${shown(value["@value"])}`;
  if (!(range in classes)) return undefined;
  const known = typesOf(value).filter((type) => type in classes);
  if (known.length === 0 || known.some((type) => ancestorsOf(type).has(range) || ancestorsOf(range).has(type)))
    return undefined;
  return `must be of ${range} (or a subclass), got ${known.join(", ")}`;
}

const INTEGERS = new Set(
  [
    "integer",
    "int",
    "long",
    "short",
    "byte",
    "positiveInteger",
    "nonNegativeInteger",
    "negativeInteger",
    "nonPositiveInteger",
  ].map((name) => `${XSD}${name}`),
);
const NUMBERS = new Set([...INTEGERS, ...["double", "decimal", "float"].map((name) => `${XSD}${name}`)]);
const DIGITS = /^[+-]?\d+$/;
const NUMERAL = /^([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)$/;
const DATE = /^-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(Z|[+-]\d{2}:\d{2})?$/;
const DATE_TIME =
  /^-?\d{4,}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T(([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d+)?|24:00:00(\.0+)?)(Z|[+-]\d{2}:\d{2})?$/;
const DURATION = /^-?P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

/** What a literal of the datatype looks like, for the message. */
function expected(range: string): string {
  const name = range.startsWith(XSD) ? `xsd:${range.slice(XSD.length)}` : range;
  if (INTEGERS.has(range)) return `an ${name}: an integral number, or its digits typed ${name}`;
  if (NUMBERS.has(range)) return `an ${name}: a number`;
  if (range === `${XSD}boolean`) return `an ${name}: true or false`;
  if (range === `${XSD}dateTime`) return `an ${name} such as "2026-10-16T15:45:00Z"`;
  if (range === `${XSD}date`) return `an ${name} such as "2026-10-16"`;
  if (range === `${XSD}duration`) return `an ${name} such as "PT2H30M"`;
  return `an ${name}: a string`;
}

function literalProblem(range: string, value: JsonLdValue): string | undefined {
  if (!("@value" in value)) return `must be ${expected(range)}, got a node`;
  const text = value["@value"];
  const type = value["@type"];
  const fits = (() => {
    if (INTEGERS.has(range))
      return typeof text === "number"
        ? Number.isInteger(text)
        : typeof text === "string" && typeof type === "string" && INTEGERS.has(type) && DIGITS.test(text);
    if (NUMBERS.has(range))
      return typeof text === "number"
        ? Number.isFinite(text)
        : typeof text === "string" && typeof type === "string" && NUMBERS.has(type) && NUMERAL.test(text);
    if (range === `${XSD}boolean`)
      return (
        typeof text === "boolean" ||
        (typeof text === "string" && type === range && ["true", "false", "1", "0"].includes(text))
      );
    if (range === `${XSD}dateTime`) return lexical(text, type, range, DATE_TIME);
    if (range === `${XSD}date`) return lexical(text, type, range, DATE);
    if (range === `${XSD}duration`) return lexical(text, type, range, DURATION);
    if (range === `${XSD}string`) return typeof text === "string" && (type === undefined || type === range);
    return true;
  })();
  return fits ? undefined : `must be ${expected(range)}, got ${shown(value)}`;
}

/** A string of the datatype's lexical form, untyped or typed with it. */
function lexical(text: unknown, type: unknown, range: string, form: RegExp): boolean {
  return typeof text === "string" && (type === undefined || type === range) && form.test(text);
}

/** A value as the message shows it: its JSON, cut short. */
function shown(value: unknown): string {
  const json = JSON.stringify(value) ?? String(value);
  return json.length > 80 ? `${json.slice(0, 77)}...` : json;
}
