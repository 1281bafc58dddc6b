import { readFileSync } from "node:fs";
import path from "node:path";
import { AppError } from "../../src/errors";
import { readJsonLdObject } from "../../src/onerecord/jsonld-codec";
import { checkOntology, ontologyProblems } from "../../src/onerecord/objects/ontology-validation";
import examplesIndex from "./examples/index.json";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const XSD = "http://www.w3.org/2001/XMLSchema#";
const index = examplesIndex.examples as Record<string, { knownDefective: boolean }>;

const read = (body: object) => readJsonLdObject({ "@context": { cargo: CARGO, xsd: XSD }, ...body });
const piece = (extra: object) => read({ "@type": "cargo:Piece", ...extra });

describe("the cargo ontology's ranges and cardinalities", () => {
  // The bodies a client sends (the examples of answers, with api:hasRevision, are not bodies to post).
  const valid = [
    "Piece.json",
    "Shipment_with_Piece.json",
    "Company.json",
    "Company_with_id.json",
    "CustomsInformation.json",
    "CustomsInformation_2.json",
    "Sensor.compacted.json",
    "Sensor.expanded.json",
    "LogisticsEvent.json",
    "LogisticsEvent_with_id.json",
  ];
  test.each(valid)("the specification's valid example %s passes", async (name) => {
    expect(index[name]?.knownDefective).toBe(false);
    const body = JSON.parse(readFileSync(path.join(__dirname, "examples", name), "utf8")) as object;
    expect(ontologyProblems(await readJsonLdObject(body))).toEqual([]);
  });

  test.each([
    ["slac", { "cargo:slac": "many" }, `${CARGO}slac`, "xsd:integer"],
    ["slac as a fraction", { "cargo:slac": 2.5 }, `${CARGO}slac`, "xsd:integer"],
    ["grossWeight", { "cargo:grossWeight": "heavy" }, `${CARGO}grossWeight`, "must be a node or an IRI"],
    ["coload", { "cargo:coload": "maybe" }, `${CARGO}coload`, "xsd:boolean"],
    ["goodsDescription twice", { "cargo:goodsDescription": ["a", "b"] }, `${CARGO}goodsDescription`, "at most 1"],
    ["goodsDescription as a number", { "cargo:goodsDescription": 7 }, `${CARGO}goodsDescription`, "xsd:string"],
    [
      "grossWeight of the wrong class",
      { "cargo:grossWeight": { "@type": "cargo:Company", "cargo:name": "ACME" } },
      `${CARGO}grossWeight`,
      `${CARGO}Value`,
    ],
    [
      "a nested Value's numericalValue",
      { "cargo:grossWeight": { "@type": "cargo:Value", "cargo:numericalValue": "ten" } },
      `${CARGO}numericalValue`,
      "xsd:double",
    ],
  ])("refuses a Piece with %s, naming the property and what it expects", async (_, extra, property, expected) => {
    const problems = ontologyProblems(await piece(extra));
    expect(problems).toEqual([{ field: property, message: expect.stringContaining(expected) as string }]);
  });

  test("accepts the literal forms each datatype allows", async () => {
    const body = await piece({
      "cargo:slac": [{ "@type": "xsd:integer", "@value": "12" }],
      "cargo:coload": true,
      "cargo:goodsDescription": { "@value": "Books", "@language": "en" },
      "cargo:grossWeight": {
        "@type": "cargo:Value",
        "cargo:numericalValue": 10,
        "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
      },
      "cargo:specialHandlingCodes": [
        { "@id": "https://onerecord.iata.org/ns/code-lists/SpecialHandlingCode#VAL", "@type": "cargo:CodeListElement" },
        { "@id": "https://onerecord.iata.org/ns/code-lists/SpecialHandlingCode#PER" },
      ],
    });
    expect(ontologyProblems(body)).toEqual([]);
  });

  test("an event's recordedPieceCount is an integer, its eventDate a dateTime", async () => {
    const event = await read({
      "@type": "cargo:StatusUpdateEvent",
      "cargo:recordedPieceCount": "lots",
      "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-13-01T00:00:00Z" },
    });
    expect(
      ontologyProblems(event)
        .map((p) => p.field)
        .sort(),
    ).toEqual([`${CARGO}eventDate`, `${CARGO}recordedPieceCount`]);
    const thrown = (() => {
      try {
        checkOntology(event);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe("INVALID_LOGISTICS_OBJECT");
  });

  test("reports a bounded number of problems however many the body has", async () => {
    const pieces = Array.from({ length: 200 }, () => ({ "@type": "cargo:Piece", "cargo:slac": "many" }));
    const shipment = await read({ "@type": "cargo:Shipment", "cargo:pieces": pieces });
    expect(ontologyProblems(shipment)).toHaveLength(20);
  });
});
