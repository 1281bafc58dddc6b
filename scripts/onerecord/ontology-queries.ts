// Questions the derived files ask of an ontology model: is a range a datatype, which individuals make
// up an enumeration, is a class a code list.
import { CARGO, RDF, RDFS, XSD } from "./namespaces";
import type { OntologyModel } from "./ontology-model";

export const CODE_LIST_ELEMENT = `${CARGO}CodeListElement`;

export function isDatatype(iri: string): boolean {
  return iri.startsWith(XSD) || iri === `${RDFS}Literal` || iri === `${RDF}langString`;
}

export interface Enumeration {
  /** owl:oneOf and every individual typed with the class, sorted. */
  members: string[];
  /** Whether the class states owl:oneOf (a closed list) rather than only having typed individuals. */
  closed: boolean;
  /** Individuals typed with the class that its owl:oneOf leaves out (an inconsistency of the ontology). */
  typedButNotInOneOf: string[];
}

export function enumeration(model: OntologyModel, classIri: string): Enumeration | undefined {
  const oneOf = model.classes.get(classIri)?.oneOf ?? [];
  const typed = [...model.individuals.values()].filter((i) => i.types.includes(classIri)).map((i) => i.iri);
  if (oneOf.length === 0 && typed.length === 0) return undefined;
  return {
    members: [...new Set([...oneOf, ...typed])].sort(),
    closed: oneOf.length > 0,
    typedButNotInOneOf: oneOf.length > 0 ? typed.filter((iri) => !oneOf.includes(iri)).sort() : [],
  };
}

/** The class and all its named superclasses, nearest first. */
export function withSuperClasses(model: OntologyModel, classIri: string): string[] {
  const seen: string[] = [];
  const visit = (iri: string) => {
    if (seen.includes(iri)) return;
    seen.push(iri);
    for (const parent of model.classes.get(iri)?.superClasses ?? []) visit(parent);
  };
  visit(classIri);
  return seen;
}

/** cargo:CodeListElement or one of its subclasses (the code lists of the code-list ontology, EventTimeType…). */
export function isCodeList(model: OntologyModel, classIri: string): boolean {
  return withSuperClasses(model, classIri).includes(CODE_LIST_ELEMENT);
}
