// Checks JSON-LD bodies against ONE Record: the vocabulary and SHACL shapes that `npm run onerecord:derive`
// derived from IATA's ontologies (src/onerecord/vocabulary/, test/onerecord/shapes.ttl).
import { readFileSync } from "node:fs";
import path from "node:path";
import jsonld from "jsonld";
import { Parser, Store, type Quad } from "n3";
import type SHACLValidator from "rdf-validate-shacl" with { "resolution-mode": "import" };
import apiVocabulary from "../../src/onerecord/vocabulary/api.json";
import cargoVocabulary from "../../src/onerecord/vocabulary/cargo.json";
import derivedContext from "../../src/onerecord/vocabulary/context.json";

export interface ConformanceViolation {
  /** The node that fails: an IRI, a blank node (`_:b0`), or "(document)". */
  focusNode: string;
  /** The property concerned (compacted: `cargo:eventDate`), or null for the node itself. */
  path: string | null;
  message: string;
  /** The offending value, when there is one. */
  value: string | null;
  /** What was checked: a SHACL constraint component (`MinCount`, `In`…), `vocabulary` or `json-ld`. */
  constraint: string;
}

export interface ConformanceReport {
  conforms: boolean;
  violations: ConformanceViolation[];
}

const SHAPES_FILE = path.resolve(__dirname, "..", "onerecord", "shapes.ttl");
const RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type";
const RDFS_SUBCLASS_OF = "http://www.w3.org/2000/01/rdf-schema#subClassOf";
const SHACL = "http://www.w3.org/ns/shacl#";
const PREFIXES: Record<string, string> = {
  cargo: "https://onerecord.iata.org/ns/cargo#",
  api: "https://onerecord.iata.org/ns/api#",
  codes: "https://onerecord.iata.org/ns/code-lists/",
  xsd: "http://www.w3.org/2001/XMLSchema#",
  rdf: "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
};
const ONE_RECORD_NAMESPACES = [PREFIXES.cargo, PREFIXES.api] as string[];
const KNOWN_PROPERTIES = new Set([
  ...Object.keys(cargoVocabulary.properties),
  ...Object.keys(apiVocabulary.properties),
]);
const KNOWN_CLASSES = new Set([...Object.keys(cargoVocabulary.classes), ...Object.keys(apiVocabulary.classes)]);

interface Shapes {
  validator: SHACLValidator;
  classHierarchy: Quad[];
}

/** Parsed once per module registry (a test file run alone, or a shard): the validator holds the shapes graph (about 11,000 triples) and is reusable. */
let shapes: Promise<Shapes> | undefined;

function loadShapes(): Promise<Shapes> {
  shapes ??= (async () => {
    const dataset = new Store(new Parser().parse(readFileSync(SHAPES_FILE, "utf8")));
    const { default: Validator } = await import("rdf-validate-shacl");
    return { validator: new Validator(dataset), classHierarchy: dataset.getQuads(null, RDFS_SUBCLASS_OF, null, null) };
  })();
  return shapes;
}

/**
 * Does a JSON-LD body conform to ONE Record? The body is expanded with the `jsonld` library (no remote
 * fetch: its context is inline, or, if it has none, the gateway's derived context.json), turned into
 * RDF, and checked in two ways:
 * - its terms: every cargo:/api: property and class it uses is one the ontologies declare (SHACL
 *   shapes are open, so a misspelt property would otherwise pass unseen), every top-level node has an
 *   @type (the API specification's "MUST include an @type"), and one at least is of a ONE Record class
 *   (else no shape would apply and anything would pass);
 * - SHACL (`rdf-validate-shacl`) against test/onerecord/shapes.ttl, the shapes `npm run
 *   onerecord:derive` generates from the ontologies' restrictions.
 * A node that carries an @type is validated as that class: an object referred to with its @type must
 * hold what the class requires (a LogisticsEvent its eventDate and eventFor), so refer to objects
 * described elsewhere by IRI alone ({"@id": …}).
 */
export async function conformanceReport(body: object): Promise<ConformanceReport> {
  let quads: Quad[];
  let expanded: jsonld.JsonLdDocument;
  try {
    expanded = await jsonld.expand(body, expandOptions(body));
    const nquads = (await jsonld.toRDF(expanded, { format: "application/n-quads" })) as unknown as string;
    quads = new Parser({ format: "N-Quads" }).parse(nquads);
  } catch (error) {
    return report([
      { focusNode: "(document)", path: null, message: jsonLdProblem(error), value: null, constraint: "json-ld" },
    ]);
  }
  const data = new Store(quads);
  const violations = [
    ...untypedTopLevelNodes(expanded),
    ...noOneRecordObject(data),
    ...unknownTerms(data),
    ...(await shaclViolations(data)),
  ];
  return report(violations);
}

export async function assertConforms(body: object): Promise<void> {
  const result = await conformanceReport(body);
  if (!result.conforms) throw new Error(`the body does not conform to ONE Record:\n${describeViolations(result)}`);
}

/** One line per violation: focus node, path, message, and the value at fault. */
export function describeViolations(result: ConformanceReport): string {
  return result.violations
    .map((v) => {
      const where = v.path === null ? v.focusNode : `${v.focusNode} ${v.path}`;
      const value = v.value === null ? "" : ` (value: ${v.value})`;
      return `- ${where}: ${v.message}${value} [${v.constraint}]`;
    })
    .join("\n");
}

function expandOptions(body: object) {
  const hasContext = "@context" in body;
  return {
    // Safe mode: what JSON-LD would drop silently (a term that expands to no IRI, a relative @type) is an error.
    safe: true,
    ...(hasContext ? {} : { expandContext: derivedContext["@context"] }),
    documentLoader: async (url: string): Promise<never> => {
      throw new Error(`refused to fetch ${url}: a ONE Record body here carries its context inline`);
    },
  };
}

/** jsonld's error, with what it wraps: a safe-mode event's details, or the cause (the refused fetch). */
function jsonLdProblem(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 5;) {
    if (!(e instanceof Error)) {
      parts.push(JSON.stringify(e));
      break;
    }
    parts.push(e.message);
    const details = (e as Error & { details?: { event?: { message?: string; details?: unknown }; cause?: unknown } })
      .details;
    if (details?.event !== undefined)
      parts.push(`${details.event.message ?? ""} ${JSON.stringify(details.event.details ?? {})}`);
    e = details?.cause ?? e.cause;
  }
  return `JSON-LD: ${parts.join(": ")}`;
}

function untypedTopLevelNodes(expanded: jsonld.JsonLdDocument): ConformanceViolation[] {
  const nodes = (Array.isArray(expanded) ? expanded : [expanded]) as Record<string, unknown>[];
  return nodes
    .filter((node) => node["@type"] === undefined && node["@graph"] === undefined)
    .map((node) => ({
      focusNode: typeof node["@id"] === "string" ? node["@id"] : "(document)",
      path: null,
      message: "a top-level object has no @type (the API specification: a JSON-LD document MUST include @type)",
      value: null,
      constraint: "vocabulary",
    }));
}

/** A body with no node of a cargo or API class would pass every shape without being checked at all. */
function noOneRecordObject(data: Store): ConformanceViolation[] {
  if (data.getQuads(null, RDF_TYPE, null, null).some((quad) => KNOWN_CLASSES.has(quad.object.value))) return [];
  const message = "no object in the body has a class of the cargo or API ontology as its @type: nothing to check";
  return [{ focusNode: "(document)", path: null, message, value: null, constraint: "vocabulary" }];
}

function unknownTerms(data: Store): ConformanceViolation[] {
  const inOneRecord = (iri: string) => ONE_RECORD_NAMESPACES.some((ns) => iri.startsWith(ns));
  return data.getQuads(null, null, null, null).flatMap((quad): ConformanceViolation[] => {
    const predicate = quad.predicate.value;
    if (inOneRecord(predicate) && !KNOWN_PROPERTIES.has(predicate))
      return [unknownTerm(quad.subject, predicate, "a property that neither the cargo nor the API ontology declares")];
    if (predicate === RDF_TYPE && inOneRecord(quad.object.value) && !KNOWN_CLASSES.has(quad.object.value))
      return [
        unknownTerm(quad.subject, RDF_TYPE, `${compact(quad.object.value)} is a class neither ontology declares`),
      ];
    return [];
  });
}

function unknownTerm(subject: RdfTerm, predicate: string, message: string): ConformanceViolation {
  return { focusNode: nodeName(subject), path: compact(predicate), message, value: null, constraint: "vocabulary" };
}

async function shaclViolations(data: Store): Promise<ConformanceViolation[]> {
  const { validator, classHierarchy } = await loadShapes();
  // SHACL sees subclasses through rdfs:subClassOf in the data graph, so the ontologies' hierarchy goes in.
  data.addQuads(classHierarchy);
  const result = await validator.validate(data);
  return result.results.map((r) => ({
    focusNode: nodeName(r.focusNode),
    path: r.path === null || r.path === undefined ? null : compact(r.path.value),
    message: r.message.map((m) => m.value).join("; ") || "(no message)",
    value: r.value === null || r.value === undefined ? null : nodeName(r.value),
    constraint: r.sourceConstraintComponent.value.replace(SHACL, "").replace(/ConstraintComponent$/, ""),
  }));
}

function report(violations: ConformanceViolation[]): ConformanceReport {
  const key = (v: ConformanceViolation) => `${v.focusNode}\u0000${v.path ?? ""}\u0000${v.constraint}\u0000${v.message}`;
  return { conforms: violations.length === 0, violations: violations.sort((a, b) => (key(a) < key(b) ? -1 : 1)) };
}

/** An RDF/JS term, from n3 or from the validator's own factory. */
interface RdfTerm {
  termType: string;
  value: string;
  language?: string;
  datatype?: { value: string };
}

function nodeName(term: RdfTerm): string {
  if (term.termType === "BlankNode") return `_:${term.value}`;
  if (term.termType !== "Literal") return compact(term.value);
  const text = JSON.stringify(term.value);
  if (term.language) return `${text}@${term.language}`;
  const datatype = term.datatype?.value ?? `${PREFIXES.xsd}string`;
  if (datatype === `${PREFIXES.xsd}string`) return text;
  const name = compact(datatype);
  return name === datatype ? `${text}^^<${datatype}>` : `${text}^^${name}`;
}

function compact(iri: string): string {
  for (const [prefix, namespace] of Object.entries(PREFIXES)) {
    const local = iri.startsWith(namespace) ? iri.slice(namespace.length) : undefined;
    if (local !== undefined && /^[A-Za-z_][\w-]*$/.test(local)) return `${prefix}:${local}`;
  }
  return iri;
}
