// The contents of src/onerecord/vocabulary/{cargo,api,code-lists}.json, built from the ontology models.
// IRIs are written in full; objects keyed by IRI, arrays sorted, so that the files are stable.
import type { ErrorTitle } from "./error-titles";
import { API, CARGO, CODES } from "./namespaces";
import type { OntologyHeader, OntologyModel, PropertyConstraint } from "./ontology-model";
import { enumeration, isCodeList, isDatatype } from "./ontology-queries";
import { specificationRequirement } from "./specification-requirements";

export interface Release {
  header: OntologyHeader;
  model: OntologyModel;
}

/** The code lists code-lists.json carries: the ones a status event's properties range over. */
export const CODE_LISTS_FOR_EVENTS = [
  `${CODES}StatusCode`,
  `${CARGO}EventTimeType`,
  `${CODES}MeasurementUnitCode`,
  `${CODES}WeightUnitCode`,
  `${CODES}VolumeUnitCode`,
];

export function cargoVocabulary(current: Release, previous: Release, codeLists: OntologyHeader): object {
  return {
    source: {
      ...versionOf(current.header),
      comparedWith: versionOf(previous.header),
      codeLists: versionOf(codeLists),
    },
    // The code lists' classes too: the cargo ontology declares them (subclasses of cargo:CodeListElement).
    classes: classesOf(current, previous, CARGO, CODES),
    properties: propertiesOf(current, previous, CARGO),
    notInCurrent: notInCurrent(current, previous, CARGO),
  };
}

export function apiVocabulary(current: Release, previous: Release, errorTitles: ErrorTitle[]): object {
  return {
    source: { ...versionOf(current.header), comparedWith: versionOf(previous.header) },
    classes: classesOf(current, previous, API),
    properties: propertiesOf(current, previous, API),
    enumerations: enumerationsOf(current, previous, API),
    notInCurrent: notInCurrent(current, previous, API),
    errorTitles: {
      source:
        "the API specification's implementation guidelines, Error Handling (the ontology has api:hasTitle but lists no titles)",
      titles: errorTitles,
    },
  };
}

export function codeListsVocabulary(cargo: Release, codeLists: OntologyHeader): object {
  const lists = CODE_LISTS_FOR_EVENTS.map((iri) => {
    const list = cargo.model.classes.get(iri);
    const members = enumeration(cargo.model, iri);
    if (list === undefined || members === undefined) throw new Error(`${iri}: not a code list with members`);
    return [
      iri,
      {
        label: list.label,
        comment: list.comment,
        closed: members.closed,
        members: members.members.map((member) => {
          const { label, comment } = cargo.model.individuals.get(member) ?? {};
          return { iri: member, label, comment };
        }),
      },
    ] as const;
  });
  return {
    source: { ...versionOf(codeLists), cargo: versionOf(cargo.header) },
    namespace: CODES,
    codeLists: Object.fromEntries(lists),
  };
}

function versionOf(header: OntologyHeader) {
  return { ontology: header.iri, version: header.version, versionIri: header.versionIri };
}

const inNamespace =
  (...namespaces: string[]) =>
  (iri: string) =>
    namespaces.some((ns) => iri.startsWith(ns));

/** The classes of the namespaces given; a code list's members (owl:oneOf) are in code-lists.json, or the code-list ontology. */
function classesOf(current: Release, previous: Release, ...namespaces: string[]) {
  const classes = [...current.model.classes.values()].filter((c) => inNamespace(...namespaces)(c.iri));
  return Object.fromEntries(
    classes.map((c) => {
      const before = previous.model.classes.get(c.iri);
      const properties = [...c.properties].map(([property, constraint]) => {
        const earlier = before?.properties.get(property);
        const changed = before !== undefined && JSON.stringify(earlier) !== JSON.stringify(constraint);
        // `previously`: what the previous release's restrictions said, where they said something else (null: nothing).
        return [
          property,
          { ...constraintJson(c.iri, property, constraint), ...(changed ? { previously: earlier ?? null } : {}) },
        ] as const;
      });
      const dropped =
        before === undefined ? [] : [...before.properties.keys()].filter((p) => !c.properties.has(p)).sort();
      return [
        c.iri,
        {
          superClasses: c.superClasses,
          inPrevious: before !== undefined,
          ...(c.deprecated ? { deprecated: true } : {}),
          ...(c.oneOf === undefined ? {} : c.iri.startsWith(CODES) ? { closed: true } : { oneOf: c.oneOf }),
          ...(isCodeList(current.model, c.iri) ? { codeList: true } : {}),
          ...(dropped.length === 0 ? {} : { restrictionsDroppedSincePrevious: dropped }),
          properties: Object.fromEntries(properties),
        },
      ];
    }),
  );
}

function constraintJson(classIri: string, propertyIri: string, constraint: PropertyConstraint) {
  const requirement = specificationRequirement(classIri, propertyIri);
  return {
    ...constraint,
    ...(constraint.range === undefined ? {} : { rangeKind: isDatatype(constraint.range) ? "datatype" : "class" }),
    ...(requirement === undefined ? {} : { specification: { min: requirement.min, because: requirement.because } }),
  };
}

function propertiesOf(current: Release, previous: Release, namespace: string) {
  const properties = [...current.model.properties.values()].filter((p) => inNamespace(namespace)(p.iri));
  return Object.fromEntries(
    properties.map((p) => [
      p.iri,
      {
        kind: p.kind,
        ...(p.range === undefined ? {} : { range: p.range }),
        ...(p.rangeFacets === undefined ? {} : { rangeFacets: p.rangeFacets }),
        inPrevious: previous.model.properties.has(p.iri),
        ...(p.deprecated ? { deprecated: true } : {}),
      },
    ]),
  );
}

function enumerationsOf(current: Release, previous: Release, namespace: string) {
  const entries = [...current.model.classes.keys()].filter(inNamespace(namespace)).flatMap((iri) => {
    const members = enumeration(current.model, iri);
    if (members === undefined) return [];
    const before = enumeration(previous.model, iri)?.members ?? [];
    return [
      [
        iri,
        {
          closed: members.closed,
          members: members.members.map((member) => ({
            iri: member,
            label: current.model.individuals.get(member)?.label,
            inPrevious: before.includes(member),
          })),
          ...(members.typedButNotInOneOf.length === 0 ? {} : { typedButNotInOneOf: members.typedButNotInOneOf }),
        },
      ] as const,
    ];
  });
  return Object.fromEntries(entries);
}

function notInCurrent(current: Release, previous: Release, namespace: string) {
  const gone = (before: Iterable<string>, now: Map<string, unknown>) =>
    [...before].filter((iri) => inNamespace(namespace)(iri) && !now.has(iri)).sort();
  return {
    classes: gone(previous.model.classes.keys(), current.model.classes),
    properties: gone(previous.model.properties.keys(), current.model.properties),
  };
}
