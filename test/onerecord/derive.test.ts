import { Parser } from "n3";
import { stableJson } from "../../scripts/onerecord/derived-files";
import { readErrorTitles } from "../../scripts/onerecord/error-titles";
import { readHeader, readModel, turtleStore } from "../../scripts/onerecord/ontology-model";
import { enumeration } from "../../scripts/onerecord/ontology-queries";
import { shaclShapes } from "../../scripts/onerecord/shacl-shapes";

// scripts/onerecord-derive.ts on a small ontology written here in the IATA files' own style (the
// reference folder is not available at test time).
const ONTOLOGY = `
@prefix : <https://onerecord.iata.org/ns/cargo#> .
@prefix codes: <https://onerecord.iata.org/ns/code-lists/> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<https://onerecord.iata.org/ns/cargo> rdf:type owl:Ontology ;
  owl:versionIRI <https://onerecord.iata.org/ns/cargo/9.9> ; owl:versionInfo "9.9.0"@en .

:eventCode rdf:type owl:ObjectProperty ; rdfs:range :CodeListElement .
:eventDate rdf:type owl:DatatypeProperty ; rdfs:range xsd:dateTime .
:code rdf:type owl:DatatypeProperty ;
  rdfs:range [ rdf:type rdfs:Datatype ; owl:onDatatype xsd:string ; owl:withRestrictions ( [ xsd:maxLength 2 ] ) ] .

:CodeListElement rdf:type owl:Class .
codes:StatusCode rdf:type owl:Class ; rdfs:subClassOf :CodeListElement ;
  owl:equivalentClass [ rdf:type owl:Class ; owl:oneOf ( <https://onerecord.iata.org/ns/code-lists/StatusCode#DEP> ) ] .
<https://onerecord.iata.org/ns/code-lists/StatusCode#DEP> rdf:type owl:NamedIndividual , codes:StatusCode ; rdfs:label "DEP"@en .
<https://onerecord.iata.org/ns/code-lists/StatusCode#ARR> rdf:type owl:NamedIndividual , codes:StatusCode ; rdfs:label "ARR"@en .
codes:MeasurementUnitCode rdf:type owl:Class ; rdfs:subClassOf :CodeListElement .

:LogisticsObject rdf:type owl:Class .
:Shipment rdf:type owl:Class ; rdfs:subClassOf :LogisticsObject .
:LogisticsEvent rdf:type owl:Class ;
  rdfs:subClassOf [ rdf:type owl:Restriction ; owl:onProperty :eventFor ; owl:allValuesFrom :LogisticsObject ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :eventFor ; owl:minCardinality "1"^^xsd:nonNegativeInteger ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :eventDate ; owl:allValuesFrom xsd:dateTime ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :eventDate ; owl:maxCardinality "1"^^xsd:nonNegativeInteger ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :unit ; owl:allValuesFrom codes:MeasurementUnitCode ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :revision ; owl:allValuesFrom xsd:positiveInteger ] ,
                  [ rdf:type owl:Restriction ; owl:onProperty :revision ;
                    owl:qualifiedCardinality "1"^^xsd:nonNegativeInteger ; owl:onDataRange xsd:integer ] .
:StatusUpdateEvent rdf:type owl:Class ;
  rdfs:subClassOf :LogisticsEvent ,
                  [ rdf:type owl:Restriction ; owl:onProperty :eventCode ; owl:allValuesFrom codes:StatusCode ] .
`;

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const CODES = "https://onerecord.iata.org/ns/code-lists/";
const store = turtleStore(ONTOLOGY);
const model = readModel(store);

test("reads a class's restrictions per property: range, cardinalities as stated, an inconsistent qualified range", () => {
  const event = model.classes.get(`${CARGO}LogisticsEvent`)!;
  expect(Object.fromEntries(event.properties)).toEqual({
    [`${CARGO}eventFor`]: { range: `${CARGO}LogisticsObject`, min: 1 },
    [`${CARGO}eventDate`]: { range: "http://www.w3.org/2001/XMLSchema#dateTime", max: 1 },
    [`${CARGO}unit`]: { range: `${CODES}MeasurementUnitCode` },
    [`${CARGO}revision`]: {
      range: "http://www.w3.org/2001/XMLSchema#positiveInteger",
      qualifiedRange: "http://www.w3.org/2001/XMLSchema#integer",
      exact: 1,
    },
  });
  expect(model.classes.get(`${CARGO}StatusUpdateEvent`)?.superClasses).toEqual([`${CARGO}LogisticsEvent`]);
  expect(model.properties.get(`${CARGO}code`)).toMatchObject({ kind: "datatype", rangeFacets: [{ maxLength: "2" }] });
  expect(readHeader(store, "https://onerecord.iata.org/ns/cargo")).toEqual({
    iri: "https://onerecord.iata.org/ns/cargo",
    version: "9.9.0",
    versionIri: "https://onerecord.iata.org/ns/cargo/9.9",
  });
});

test("a closed list's members are its owl:oneOf and the individuals typed with it; an open list is not closed", () => {
  expect(enumeration(model, `${CODES}StatusCode`)).toEqual({
    members: [`${CODES}StatusCode#ARR`, `${CODES}StatusCode#DEP`],
    closed: true,
    typedButNotInOneOf: [`${CODES}StatusCode#ARR`],
  });
  expect(enumeration(model, `${CODES}MeasurementUnitCode`)).toBeUndefined();
});

test("shapes: one node shape per restricted class, sh:in for a closed list, an IRI for an open one, sh:class or a link otherwise", () => {
  const turtle = shaclShapes(model, [readHeader(store, "https://onerecord.iata.org/ns/cargo")], "derive");
  expect(() => new Parser().parse(turtle)).not.toThrow();
  expect(turtle).toContain("cargo:StatusUpdateEvent rdfs:subClassOf cargo:LogisticsEvent .");
  const shape = (name: string) => turtle.slice(turtle.indexOf(`shape:cargo-${name}\n`)).split("\n\n")[0]!;
  const statusUpdate = shape("StatusUpdateEvent");
  expect(statusUpdate).toContain("sh:targetClass cargo:StatusUpdateEvent");
  expect(statusUpdate).toContain(`sh:in ( <${CODES}StatusCode#ARR> <${CODES}StatusCode#DEP> )`);
  const event = shape("LogisticsEvent");
  expect(event).toMatch(/sh:path cargo:eventFor ;\s+sh:minCount 1 ;\s+sh:or \( \[ sh:class cargo:LogisticsObject \]/);
  // The API specification's text makes eventDate required; the shape says where that comes from.
  expect(event).toMatch(/sh:path cargo:eventDate ;\s+sh:minCount 1 ;\s+sh:maxCount 1 ;\s+sh:datatype xsd:dateTime/);
  expect(event).toContain('rdfs:comment "API specification: Logistics Events page: \\"Every Logistics Event MUST');
  expect(event).toMatch(/sh:path cargo:unit ;\s+sh:nodeKind sh:IRI/);
  expect(event).toMatch(
    /sh:path cargo:revision ;\s+sh:minCount 1 ;\s+sh:maxCount 1 ;\s+sh:or \( \[ sh:datatype xsd:positiveInteger \] \[ sh:datatype xsd:integer ; sh:minInclusive 1 \] \)/,
  );
  expect(shaclShapes(model, [], "derive")).toBe(shaclShapes(readModel(turtleStore(ONTOLOGY)), [], "derive"));
});

test("stable JSON: keys sorted at every depth, arrays kept in order, undefined left out", () => {
  expect(stableJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe(
    '{\n  "a": {\n    "d": [\n      3,\n      {\n        "y": 2,\n        "z": 1\n      }\n    ]\n  },\n  "b": 1\n}\n',
  );
});

test("the error titles come from the specification's table, and a page without it is refused", () => {
  const page = [
    "text",
    "| HTTP status code | Title | Message in ErrorDetails |",
    "| --- | --- | --- |",
    "| `400` | `Invalid body request` | The request body is missing. |",
    "| `404` | `Resource not found` | The requested resource cannot be found. |",
    "",
    "| other | table |",
  ].join("\n");
  expect(readErrorTitles(page)).toEqual([
    { httpStatus: 400, title: "Invalid body request", message: "The request body is missing." },
    { httpStatus: 404, title: "Resource not found", message: "The requested resource cannot be found." },
  ]);
  expect(readErrorTitles("another page", page)).toHaveLength(2);
  expect(() => readErrorTitles("no table here")).toThrow(/table of error titles was not found/);
  expect(() => readErrorTitles(page, page)).toThrow(/not found on exactly one page/);
});
