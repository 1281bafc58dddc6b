// What the derive script reads out of an OWL ontology: classes with the constraints their
// owl:Restrictions put on properties, the properties themselves, and named individuals.
import { readFileSync } from "node:fs";
import { Parser, Store, type Quad_Object, type Term } from "n3";
import { OWL, RDF, RDFS, XSD } from "./namespaces";

/** What one class's owl:Restrictions say about one property (cardinalities as the ontology states them). */
export interface PropertyConstraint {
  /** owl:allValuesFrom, else the qualified restriction's owl:onClass / owl:onDataRange. */
  range?: string;
  /** A qualified restriction's range where it differs from owl:allValuesFrom (an inconsistency). */
  qualifiedRange?: string;
  someValuesFrom?: string;
  min?: number;
  max?: number;
  exact?: number;
}

export interface ClassModel {
  iri: string;
  label?: string;
  comment?: string;
  /** Named superclasses (rdfs:subClassOf an IRI, not a restriction). */
  superClasses: string[];
  properties: Map<string, PropertyConstraint>;
  /** The members of an owl:equivalentClass [ owl:oneOf (...) ], if the class is an enumeration. */
  oneOf?: string[];
  deprecated: boolean;
}

export interface PropertyModel {
  iri: string;
  kind: "object" | "datatype";
  label?: string;
  /** rdfs:range when it is named; a restricted datatype is given as its base (facets in `rangeFacets`). */
  range?: string;
  rangeFacets?: Record<string, string>[];
  deprecated: boolean;
}

export interface IndividualModel {
  iri: string;
  types: string[];
  label?: string;
  comment?: string;
}

export interface OntologyHeader {
  iri: string;
  version: string;
  versionIri: string;
}

/** Everything the files read declare (an ontology together with the ontologies it imports). */
export interface OntologyModel {
  classes: Map<string, ClassModel>;
  properties: Map<string, PropertyModel>;
  individuals: Map<string, IndividualModel>;
}

const CARDINALITIES = {
  [`${OWL}minCardinality`]: "min",
  [`${OWL}minQualifiedCardinality`]: "min",
  [`${OWL}maxCardinality`]: "max",
  [`${OWL}maxQualifiedCardinality`]: "max",
  [`${OWL}cardinality`]: "exact",
  [`${OWL}qualifiedCardinality`]: "exact",
} as const;

export function loadTurtle(...files: string[]): Store {
  return turtleStore(...files.map((file) => readFileSync(file, "utf8")));
}

export function turtleStore(...documents: string[]): Store {
  const store = new Store();
  for (const text of documents) store.addQuads(new Parser().parse(text));
  return store;
}

/** One model of several ontologies: a class declared in more than one has their superclasses and restrictions together. */
export function mergeModels(...models: OntologyModel[]): OntologyModel {
  const merged: OntologyModel = { classes: new Map(), properties: new Map(), individuals: new Map() };
  for (const model of models) {
    for (const [iri, c] of model.classes) {
      const known = merged.classes.get(iri);
      if (known === undefined) merged.classes.set(iri, { ...c, properties: new Map(c.properties) });
      else {
        known.superClasses = [...new Set([...known.superClasses, ...c.superClasses])].sort();
        for (const [property, constraint] of c.properties) known.properties.set(property, constraint);
        known.oneOf ??= c.oneOf;
      }
    }
    for (const [iri, p] of model.properties) if (!merged.properties.has(iri)) merged.properties.set(iri, p);
    for (const [iri, i] of model.individuals) if (!merged.individuals.has(iri)) merged.individuals.set(iri, i);
  }
  return merged;
}

/** The version of the ontology `ontologyIri` (owl:versionInfo, owl:versionIRI). */
export function readHeader(store: Store, ontologyIri: string): OntologyHeader {
  const version = one(store, ontologyIri, `${OWL}versionInfo`)?.value;
  const versionIri = one(store, ontologyIri, `${OWL}versionIRI`)?.value;
  if (version === undefined || versionIri === undefined)
    throw new Error(`${ontologyIri}: no owl:Ontology with owl:versionInfo and owl:versionIRI in the files read`);
  return { iri: ontologyIri, version, versionIri };
}

export function readModel(store: Store): OntologyModel {
  return { classes: readClasses(store), properties: readProperties(store), individuals: readIndividuals(store) };
}

function readClasses(store: Store): Map<string, ClassModel> {
  const classes = new Map<string, ClassModel>();
  for (const subject of store.getSubjects(`${RDF}type`, `${OWL}Class`, null)) {
    if (subject.termType !== "NamedNode") continue;
    const model: ClassModel = {
      iri: subject.value,
      ...annotations(store, subject.value),
      superClasses: [],
      properties: new Map(),
      deprecated: isDeprecated(store, subject.value),
    };
    for (const parent of store.getObjects(subject, `${RDFS}subClassOf`, null)) {
      if (parent.termType === "NamedNode") model.superClasses.push(parent.value);
      else readRestriction(store, parent, model);
    }
    model.superClasses.sort();
    for (const equivalent of store.getObjects(subject, `${OWL}equivalentClass`, null)) {
      const list = one(store, equivalent, `${OWL}oneOf`);
      if (list !== undefined) model.oneOf = rdfList(store, list).sort();
    }
    classes.set(subject.value, model);
  }
  return classes;
}

function readRestriction(store: Store, restriction: Term, model: ClassModel): void {
  const property = one(store, restriction, `${OWL}onProperty`)?.value;
  if (property === undefined) return;
  const constraint = model.properties.get(property) ?? {};
  model.properties.set(property, constraint);
  const allValuesFrom = named(one(store, restriction, `${OWL}allValuesFrom`));
  const qualified = named(one(store, restriction, `${OWL}onClass`) ?? one(store, restriction, `${OWL}onDataRange`));
  const someValuesFrom = named(one(store, restriction, `${OWL}someValuesFrom`));
  if (allValuesFrom !== undefined) {
    if (constraint.range !== undefined && constraint.qualifiedRange === undefined && constraint.range !== allValuesFrom)
      constraint.qualifiedRange = constraint.range;
    constraint.range = allValuesFrom;
    if (constraint.qualifiedRange === allValuesFrom) delete constraint.qualifiedRange;
  }
  if (qualified !== undefined) {
    if (constraint.range === undefined) constraint.range = qualified;
    else if (constraint.range !== qualified) constraint.qualifiedRange = qualified;
  }
  if (someValuesFrom !== undefined) constraint.someValuesFrom = someValuesFrom;
  for (const [predicate, key] of Object.entries(CARDINALITIES)) {
    const count = one(store, restriction, predicate);
    if (count !== undefined) constraint[key] = Number(count.value);
  }
}

function readProperties(store: Store): Map<string, PropertyModel> {
  const properties = new Map<string, PropertyModel>();
  for (const [type, kind] of [
    [`${OWL}ObjectProperty`, "object"],
    [`${OWL}DatatypeProperty`, "datatype"],
  ] as const) {
    for (const subject of store.getSubjects(`${RDF}type`, type, null)) {
      if (subject.termType !== "NamedNode") continue;
      const model: PropertyModel = {
        iri: subject.value,
        kind,
        label: annotations(store, subject.value).label,
        deprecated: isDeprecated(store, subject.value),
      };
      const ranges = store.getObjects(subject, `${RDFS}range`, null);
      const range = ranges.find((r) => r.termType === "NamedNode");
      if (range !== undefined) model.range = range.value;
      for (const restricted of ranges.filter((r) => r.termType === "BlankNode")) {
        const base = named(one(store, restricted, `${OWL}onDatatype`));
        if (base === undefined) continue;
        model.range ??= base;
        const facets = one(store, restricted, `${OWL}withRestrictions`);
        for (const facet of facets === undefined ? [] : rdfListNodes(store, facets)) {
          const entries = store
            .getQuads(facet, null, null, null)
            .map((q) => [q.predicate.value.slice(XSD.length), q.object.value]);
          (model.rangeFacets ??= []).push(Object.fromEntries(entries) as Record<string, string>);
        }
      }
      properties.set(subject.value, model);
    }
  }
  return properties;
}

function readIndividuals(store: Store): Map<string, IndividualModel> {
  const individuals = new Map<string, IndividualModel>();
  for (const subject of store.getSubjects(`${RDF}type`, `${OWL}NamedIndividual`, null)) {
    if (subject.termType !== "NamedNode") continue;
    const types = store
      .getObjects(subject, `${RDF}type`, null)
      .map((t) => t.value)
      .filter((t) => t !== `${OWL}NamedIndividual`)
      .sort();
    individuals.set(subject.value, { iri: subject.value, types, ...annotations(store, subject.value) });
  }
  return individuals;
}

/** rdfs:label and rdfs:comment, English (or untagged) first; several comments joined. */
function annotations(store: Store, iri: string): { label?: string; comment?: string } {
  const texts = (predicate: string) =>
    store
      .getObjects(iri, predicate, null)
      .filter((o) => o.termType === "Literal" && (o.language === "" || o.language.startsWith("en")))
      .map((o) => o.value.trim())
      .sort();
  const [label] = texts(`${RDFS}label`);
  const comments = texts(`${RDFS}comment`);
  return {
    ...(label === undefined ? {} : { label }),
    ...(comments.length === 0 ? {} : { comment: comments.join(" ") }),
  };
}

function isDeprecated(store: Store, iri: string): boolean {
  return store.getObjects(iri, `${OWL}deprecated`, null).some((o) => o.value === "true");
}

function one(store: Store, subject: Term | string, predicate: string): Quad_Object | undefined {
  return store.getObjects(subject, predicate, null)[0];
}

function named(term: Term | undefined): string | undefined {
  return term?.termType === "NamedNode" ? term.value : undefined;
}

function rdfListNodes(store: Store, head: Term): Term[] {
  const items: Term[] = [];
  for (let node: Term | undefined = head; node !== undefined && node.value !== `${RDF}nil`;) {
    const first = one(store, node, `${RDF}first`);
    if (first !== undefined) items.push(first);
    node = one(store, node, `${RDF}rest`);
  }
  return items;
}

function rdfList(store: Store, head: Term): string[] {
  return rdfListNodes(store, head).flatMap((t) => (t.termType === "NamedNode" ? [t.value] : []));
}
