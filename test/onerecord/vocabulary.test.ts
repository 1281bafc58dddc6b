import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import api from "../../src/onerecord/vocabulary/api.json";
import cargo from "../../src/onerecord/vocabulary/cargo.json";
import codeLists from "../../src/onerecord/vocabulary/code-lists.json";
import context from "../../src/onerecord/vocabulary/context.json";
import examplesIndex from "./examples/index.json";

// The reference folder is not here at test time: these are facts of IATA's ontologies that the gateway
// relies on, checked in the files `npm run onerecord:derive` wrote.
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const API = "https://onerecord.iata.org/ns/api#";
const CODES = "https://onerecord.iata.org/ns/code-lists/";
const XSD = "http://www.w3.org/2001/XMLSchema#";

type Constraint = {
  range?: string;
  rangeKind?: string;
  min?: number;
  max?: number;
  exact?: number;
  specification?: { min: number };
  previously?: unknown;
};
type ClassEntry = { superClasses: string[]; inPrevious: boolean; properties: Record<string, Constraint> };
const cargoClasses = cargo.classes as Record<string, ClassEntry>;
const apiClasses = api.classes as Record<string, ClassEntry>;
const cargoProperties = cargo.properties as Record<string, { kind: string; inPrevious: boolean }>;
const lists = codeLists.codeLists as Record<
  string,
  { closed: boolean; members: { iri: string; label: string; comment: string }[] }
>;

describe("cargo ontology 3.3", () => {
  test("StatusUpdateEvent is new in 3.3, a subclass of LogisticsEvent, for a Shipment, coded from StatusCode", () => {
    expect(cargo.source.version).toBe("3.3.0");
    expect(cargo.source.comparedWith.versionIri).toBe("https://onerecord.iata.org/ns/cargo/3.2");
    const event = cargoClasses[`${CARGO}StatusUpdateEvent`]!;
    expect(event.inPrevious).toBe(false);
    expect(event.superClasses).toEqual([`${CARGO}LogisticsEvent`]);
    expect(event.properties[`${CARGO}eventCode`]).toEqual({ range: `${CODES}StatusCode`, rangeKind: "class" });
    expect(event.properties[`${CARGO}eventFor`]).toEqual({ range: `${CARGO}Shipment`, rangeKind: "class" });
    expect(event.properties[`${CARGO}recordedPieceCount`]).toEqual({
      range: `${XSD}integer`,
      rangeKind: "datatype",
      max: 1,
    });
    expect(event.properties[`${CARGO}recordedWeight`]).toEqual({ range: `${CARGO}Value`, rangeKind: "class", max: 1 });
    for (const property of ["transportMovementReference", "transferredFrom", "transferredTo", "notifiedOrganization"])
      expect(event.properties[`${CARGO}${property}`]?.max).toBe(1);
  });

  test("LogisticsEvent: eventFor at least one (3.2: at most one), eventDate required by the API text, the rest at most one", () => {
    const event = cargoClasses[`${CARGO}LogisticsEvent`]!;
    expect(event.inPrevious).toBe(true);
    expect(event.properties[`${CARGO}eventFor`]).toEqual({
      range: `${CARGO}LogisticsObject`,
      rangeKind: "class",
      min: 1,
      previously: { range: `${CARGO}LogisticsObject`, max: 1 },
    });
    expect(event.properties[`${CARGO}eventDate`]).toMatchObject({
      range: `${XSD}dateTime`,
      max: 1,
      specification: { min: 1 },
    });
    expect(event.properties[`${CARGO}eventDate`]?.min).toBeUndefined(); // the ontology itself does not require it
    expect(event.properties[`${CARGO}eventCode`]).toEqual({
      range: `${CARGO}CodeListElement`,
      rangeKind: "class",
      max: 1,
    });
    expect(event.properties[`${CARGO}eventTimeType`]).toEqual({
      range: `${CARGO}EventTimeType`,
      rangeKind: "class",
      max: 1,
    });
    expect(event.properties[`${CARGO}eventLocation`]).toEqual({
      range: `${CARGO}Location`,
      rangeKind: "class",
      max: 1,
    });
    for (const property of [
      "creationDate",
      "eventName",
      "partialEventIndicator",
      "recordingOrganization",
      "recordingActor",
    ])
      expect(event.properties[`${CARGO}${property}`]?.max).toBe(1);
    // eventFor is the only property the whole cargo ontology requires.
    const required = Object.entries(cargoClasses).flatMap(([c, entry]) =>
      Object.entries(entry.properties)
        .filter(([, p]) => (p.min ?? 0) > 0 || (p.exact ?? 0) > 0)
        .map(([p]) => `${c} ${p}`),
    );
    expect(required).toEqual([`${CARGO}LogisticsEvent ${CARGO}eventFor`]);
  });

  test("properties have a kind: eventCode and eventFor link objects, eventDate holds a literal", () => {
    expect(cargoProperties[`${CARGO}eventCode`]?.kind).toBe("object");
    expect(cargoProperties[`${CARGO}eventFor`]?.kind).toBe("object");
    expect(cargoProperties[`${CARGO}eventDate`]?.kind).toBe("datatype");
    expect(cargoProperties[`${CARGO}recordedWeight`]).toMatchObject({ kind: "object", inPrevious: false });
    expect(Object.values(cargoProperties).every((p) => p.kind === "object" || p.kind === "datatype")).toBe(true);
  });

  test("every range and superclass named is a class the vocabulary declares, or an XSD datatype", () => {
    const declared = new Set([...Object.keys(cargoClasses), ...Object.keys(apiClasses)]);
    const named = [...Object.values(cargoClasses), ...Object.values(apiClasses)].flatMap((c) => [
      ...c.superClasses,
      ...Object.values(c.properties).flatMap((p) => (p.range === undefined ? [] : [p.range])),
    ]);
    const unknown = named.filter((iri) => !declared.has(iri) && !iri.startsWith(XSD));
    expect([...new Set(unknown)]).toEqual([]);
    expect(cargoClasses[`${CODES}StatusCode`]).toMatchObject({
      superClasses: [`${CARGO}CodeListElement`],
      closed: true,
    });
  });
});

describe("code lists", () => {
  test("StatusCode: 37 members, the cXML status codes and DIS_ discrepancy codes, each IRI its code after StatusCode#", () => {
    const statusCode = lists[`${CODES}StatusCode`]!;
    expect(statusCode.closed).toBe(true);
    expect(statusCode.members).toHaveLength(37);
    const codes = statusCode.members.map((m) => m.label);
    expect(codes).toEqual(
      expect.arrayContaining(["DEP", "RCS", "ARR", "RCF", "NFD", "DLV", "DDL", "MAN", "RCT", "TFD", "BKD", "FOH"]),
    );
    expect(codes.filter((code) => code.startsWith("DIS_"))).toHaveLength(12);
    expect(codes).toContain("DIS_OFLD");
    // The gateway's own "DIS" and "TOA" are no members: DIS comes with its discrepancy code.
    expect(codes).not.toContain("DIS");
    expect(codes).not.toContain("TOA");
    for (const member of statusCode.members) {
      expect(member.iri).toBe(`${CODES}StatusCode#${member.label}`);
      expect(member.comment.length).toBeGreaterThan(0);
    }
    expect(statusCode.members.find((m) => m.label === "DEP")?.comment).toMatch(/departed/);
  });

  test("EventTimeType is a closed list of the cargo ontology; weights take KGM, LBR or ONZ from MeasurementUnitCode", () => {
    expect(lists[`${CARGO}EventTimeType`]?.members.map((m) => m.iri)).toEqual(
      ["ACTUAL", "ESTIMATED", "EXPECTED", "PLANNED", "REQUESTED"].map((t) => `${CARGO}${t}`),
    );
    expect(lists[`${CODES}WeightUnitCode`]?.members.map((m) => m.iri)).toEqual(
      ["KGM", "LBR", "ONZ"].map((u) => `${CODES}MeasurementUnitCode#${u}`),
    );
    expect(lists[`${CODES}MeasurementUnitCode`]?.closed).toBe(false);
    expect(codeLists.namespace).toBe(CODES);
    expect(codeLists.source.version).toBe("1.1.0");
  });
});

describe("API ontology 2.3.0", () => {
  const enumerations = api.enumerations as Record<
    string,
    { closed: boolean; members: { iri: string; inPrevious: boolean }[]; typedButNotInOneOf?: string[] }
  >;
  const members = (name: string) => enumerations[`${API}${name}`]?.members.map((m) => m.iri.slice(API.length));

  test("its enumerations: event types, topic types, request statuses, severities (new in 2.3.0)", () => {
    expect(api.source.version).toBe("2.3.0");
    expect(api.source.comparedWith.version).toBe("2.2.0");
    expect(members("SubscriptionEventType")).toEqual([
      "LOGISTICS_EVENT_RECEIVED",
      "LOGISTICS_OBJECT_CREATED",
      "LOGISTICS_OBJECT_UPDATED",
    ]);
    expect(members("TopicType")).toEqual(["LOGISTICS_OBJECT_IDENTIFIER", "LOGISTICS_OBJECT_TYPE"]);
    expect(members("NotificationEventType")).toEqual(
      expect.arrayContaining(["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_UPDATED"]),
    );
    // Typed NotificationEventType, but left out of its owl:oneOf: the shapes accept them (the examples use one).
    expect(enumerations[`${API}NotificationEventType`]?.typedButNotInOneOf).toEqual([
      `${API}LOGISTICS_OBJECT_ACCESS_GRANTED`,
      `${API}LOGISTICS_OBJECT_AVAILABLE`,
    ]);
    expect(members("RequestStatus")).toEqual(
      expect.arrayContaining(["REQUEST_ACCEPTED", "REQUEST_PENDING", "REQUEST_ACKNOWLEDGED"]),
    );
    expect(members("Severity")).toEqual(["ERROR", "WARNING"]);
    expect(enumerations[`${API}Severity`]?.members.every((m) => !m.inPrevious)).toBe(true);
  });

  test("its classes, and what 2.3.0 added to 2.2.0", () => {
    for (const name of [
      "ServerInformation",
      "Error",
      "ErrorDetail",
      "Collection",
      "Subscription",
      "Notification",
      "ActionRequest",
      "ChangeRequest",
      "SubscriptionRequest",
      "Change",
      "Operation",
      "AuditTrail",
    ])
      expect(apiClasses[`${API}${name}`]?.inPrevious).toBe(true);
    for (const name of ["EventCreationResult", "MultiStatusResponse", "RequestStatusEntry"])
      expect(apiClasses[`${API}${name}`]?.inPrevious).toBe(false);
    expect(apiClasses[`${API}ChangeRequest`]?.superClasses).toEqual([`${API}ActionRequest`]);
    expect(apiClasses[`${API}Notification`]?.properties[`${API}hasEventType`]).toMatchObject({
      exact: 1,
      range: `${API}NotificationEventType`,
    });
    expect(apiClasses[`${API}Error`]?.properties[`${API}hasSeverity`]).toMatchObject({ max: 1, previously: null });
    expect(apiClasses[`${API}Subscription`]?.properties[`${API}notifyRequestStatusChange`]).toMatchObject({
      exact: 1,
      specification: { min: 0 },
    });
  });

  test("the error titles of the specification's table", () => {
    expect(api.errorTitles.titles).toContainEqual(
      expect.objectContaining({ httpStatus: 404, title: "Resource not found" }),
    );
    expect(api.errorTitles.titles).toContainEqual(
      expect.objectContaining({ httpStatus: 400, title: "Invalid body request" }),
    );
    expect(api.errorTitles.titles.map((t) => t.httpStatus)).toEqual([
      400, 400, 400, 401, 403, 404, 405, 409, 415, 422, 500,
    ]);
  });
});

describe("the JSON-LD context", () => {
  const terms = context["@context"] as Record<string, unknown>;

  test("has the cargo, api and xsd prefixes and no code-list prefix (code-list IRIs stay whole, as in the examples)", () => {
    expect(terms).toMatchObject({ cargo: CARGO, api: API, xsd: XSD });
    expect(Object.values(terms)).not.toContain(CODES);
  });

  test("coerces the API's typed literals as ServerInformation.json does, and no cargo property", () => {
    expect(terms["api:hasServerEndpoint"]).toEqual({ "@type": "xsd:anyURI" });
    expect(terms["api:hasTopic"]).toEqual({ "@type": "xsd:anyURI" });
    expect(terms["api:hasTotalItems"]).toEqual({ "@type": "xsd:nonNegativeInteger" });
    expect(Object.keys(terms).filter((t) => t.startsWith("cargo:"))).toEqual([]);
  });
});

describe("provenance", () => {
  test("the README names the versions the files come from and the command that derives them", () => {
    const readme = readFileSync(path.resolve(__dirname, "../../src/onerecord/vocabulary/README.md"), "utf8");
    for (const version of [
      cargo.source.version,
      cargo.source.comparedWith.version,
      api.source.version,
      api.source.comparedWith.version,
      codeLists.source.version,
    ])
      expect(readme).toContain(version);
    expect(readme).toContain("npm run onerecord:derive -- <ONE Record reference folder>");
  });

  test("the examples' index lists every copied example, and the reference README's three defective ones", () => {
    const examples = examplesIndex.examples as Record<string, { knownDefective: boolean }>;
    const copied = readdirSync(path.join(__dirname, "examples")).filter(
      (name) => name.endsWith(".json") && name !== "index.json",
    );
    expect(Object.keys(examples).sort()).toEqual(copied.sort());
    expect(
      Object.keys(examples)
        .filter((name) => examples[name]?.knownDefective)
        .sort(),
    ).toEqual(["LogisticsEvents_list.json", "ServerInformation.json", "Subscriptions_example2.json"]);
  });
});
