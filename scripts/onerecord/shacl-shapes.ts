// test/onerecord/shapes.ttl: SHACL shapes generated from the owl:Restrictions of the cargo and API
// ontologies, one sh:NodeShape per restricted class and one property shape per restricted property.
//
// How a restriction's range becomes a constraint on the values:
// - a datatype: sh:datatype; JSON-LD writes some values with another datatype than the ontology's,
//   and those are accepted too: a string under "@language" is an rdf:langString, a bare JSON number an
//   xsd:integer (or xsd:double), which is how the examples write counts and measures;
// - a closed list (owl:oneOf: StatusCode, EventTimeType, the API's event and topic types…): sh:in its
//   members, which are also the individuals typed with the class where owl:oneOf leaves some out;
// - an open code list (cargo:CodeListElement and subclasses without owl:oneOf): an IRI (code-list
//   elements are referenced by IRI, never embedded);
// - any other class: sh:class, or a link to an object described elsewhere: an IRI without @type.
// Cardinalities are sh:minCount / sh:maxCount, except where the API specification's text overrides
// the ontology (specification-requirements.ts: those shapes carry an rdfs:comment saying why).
// SHACL reads rdfs:subClassOf from the data graph, so the file also holds the class hierarchy, which
// the conformance checker adds to the data it validates.
import { OWL, PREFIXES, XSD, compactIri } from "./namespaces";
import type { OntologyHeader, OntologyModel, PropertyConstraint } from "./ontology-model";
import { enumeration, isCodeList, isDatatype } from "./ontology-queries";
import { specificationRequirement } from "./specification-requirements";

const SHAPE_NAMESPACE = "urn:cargo-gateway:onerecord-shapes:";

interface ValueConstraint {
  turtle: string[];
  description: string;
}

export function shaclShapes(model: OntologyModel, headers: OntologyHeader[], command: string): string {
  const lines = [
    "# SHACL shapes generated from the owl:Restrictions of the ONE Record ontologies:",
    ...headers.map((h) => `#   ${h.iri} ${h.version} (${h.versionIri})`),
    `# by scripts/onerecord-derive.ts (${command}). Generated: derive again rather than edit.`,
    "",
    ...Object.entries({ ...PREFIXES, shape: SHAPE_NAMESPACE }).map(([p, ns]) => `@prefix ${p}: <${ns}> .`),
    "",
    "# The class hierarchy (SHACL takes rdfs:subClassOf from the data graph: the checker adds these triples to it).",
    ...classHierarchy(model),
    "",
  ];
  const restricted = [...model.classes.values()].filter((c) => c.properties.size > 0).sort(byIri);
  for (const c of restricted) {
    const propertyShapes = [...c.properties]
      .sort(([a], [b]) => compare(a, b))
      .map(([property, constraint]) => propertyShape(model, c.iri, property, constraint));
    lines.push(
      `${shapeName(c.iri)}`,
      "  a sh:NodeShape ;",
      `  sh:targetClass ${term(c.iri)} ;`,
      `  sh:property ${propertyShapes.join(" , ")} .`,
      "",
    );
  }
  return `${lines.join("\n").trimEnd()}\n`;
}

function classHierarchy(model: OntologyModel): string[] {
  return [...model.classes.values()]
    .sort(byIri)
    .flatMap((c) =>
      c.superClasses.filter((s) => s !== `${OWL}Thing`).map((s) => `${term(c.iri)} rdfs:subClassOf ${term(s)} .`),
    );
}

function propertyShape(
  model: OntologyModel,
  classIri: string,
  propertyIri: string,
  constraint: PropertyConstraint,
): string {
  const requirement = specificationRequirement(classIri, propertyIri);
  const stated = Math.max(constraint.min ?? 0, constraint.exact ?? 0, constraint.someValuesFrom === undefined ? 0 : 1);
  const min = requirement?.min ?? stated;
  const maxima = [constraint.max, constraint.exact].filter((n): n is number => n !== undefined);
  const max = maxima.length === 0 ? undefined : Math.min(...maxima);
  const value = constraint.range === undefined ? undefined : valueConstraint(model, constraint.range);
  const body = [
    `sh:path ${term(propertyIri)}`,
    ...(min > 0 ? [`sh:minCount ${min}`] : []),
    ...(max === undefined ? [] : [`sh:maxCount ${max}`]),
    ...(value?.turtle ?? []),
    `sh:message ${literal(message(classIri, propertyIri, min, max, value, requirement !== undefined))}`,
    ...(requirement === undefined ? [] : [`rdfs:comment ${literal(`API specification: ${requirement.because}`)}`]),
  ];
  return `[\n    ${body.join(" ;\n    ")}\n  ]`;
}

function valueConstraint(model: OntologyModel, range: string): ValueConstraint | undefined {
  if (range === `${OWL}Thing`) return undefined;
  if (isDatatype(range)) return datatypeConstraint(range);
  const members = enumeration(model, range);
  if (members?.closed)
    return {
      turtle: [`sh:in ( ${members.members.map(term).join(" ")} )`],
      description: `one of the ${members.members.length} members of ${compactIri(range)}`,
    };
  if (isCodeList(model, range))
    return {
      turtle: ["sh:nodeKind sh:IRI"],
      description: `the IRI of a member of ${compactIri(range)} (an open code list)`,
    };
  return {
    turtle: [
      `sh:or ( [ sh:class ${term(range)} ] [ sh:nodeKind sh:IRI ; sh:not [ sh:path rdf:type ; sh:minCount 1 ] ] )`,
    ],
    description: `an object of class ${compactIri(range)} (with its @type), or a link to one (an IRI without @type)`,
  };
}

function datatypeConstraint(datatype: string): ValueConstraint {
  const alternatives = (...shapes: string[]) => `sh:or ( ${shapes.map((s) => `[ ${s} ]`).join(" ")} )`;
  const name = compactIri(datatype);
  switch (datatype) {
    case `${XSD}string`:
      return {
        turtle: [alternatives("sh:datatype xsd:string", "sh:datatype rdf:langString")],
        description: "a string (language-tagged or not)",
      };
    case `${XSD}nonNegativeInteger`:
    case `${XSD}positiveInteger`: {
      const least = datatype === `${XSD}positiveInteger` ? 1 : 0;
      return {
        turtle: [alternatives(`sh:datatype ${name}`, `sh:datatype xsd:integer ; sh:minInclusive ${least}`)],
        description: `an ${name} (a JSON integer ≥ ${least} will do)`,
      };
    }
    case `${XSD}double`:
      return {
        turtle: [alternatives("sh:datatype xsd:double", "sh:datatype xsd:decimal", "sh:datatype xsd:integer")],
        description: "a number (xsd:double; a JSON number will do)",
      };
    default:
      return { turtle: [`sh:datatype ${term(datatype)}`], description: `an ${name} literal` };
  }
}

function message(
  classIri: string,
  propertyIri: string,
  min: number,
  max: number | undefined,
  value: ValueConstraint | undefined,
  fromSpecification: boolean,
): string {
  const values = (n: number) => `${n} value${n === 1 ? "" : "s"}`;
  const count =
    min > 0 && max === min
      ? `exactly ${values(min)}`
      : min > 0 && max !== undefined
        ? `${min} to ${values(max)}`
        : min > 0
          ? `at least ${values(min)}`
          : max !== undefined
            ? `at most ${values(max)}`
            : "any number of values";
  const why = fromSpecification ? " (as the API specification says)" : "";
  return `${compactIri(classIri)} ${compactIri(propertyIri)}: ${count}${why}${value === undefined ? "" : `, each ${value.description}`}`;
}

function shapeName(classIri: string): string {
  const compact = compactIri(classIri);
  if (compact === classIri) throw new Error(`${classIri}: no prefix abbreviates it, so its shape has no name`);
  return `shape:${compact.replace(":", "-")}`;
}

function term(iri: string): string {
  const compact = compactIri(iri);
  return compact === iri ? `<${iri}>` : compact;
}

function literal(text: string): string {
  return JSON.stringify(text);
}

function byIri(a: { iri: string }, b: { iri: string }): number {
  return compare(a.iri, b.iri);
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
