import codeLists from "../../src/onerecord/vocabulary/code-lists.json";
import {
  type CarrierFacts,
  carrierStatusEvent,
  flightOfTransportMovementId,
  milestoneEvent,
  type MilestoneFacts,
  transportMovementIdOf,
  withContext,
} from "../../src/onerecord/events/event-mapping";
import {
  milestoneStateOf,
  STATUS_CODE_LABELS,
  statusCodeLabelOf,
  weightUnitIri,
} from "../../src/onerecord/events/status-codes";
import { STATUS_CODES } from "../../src/domain/status";
import { assertConforms, conformanceReport } from "../support/onerecord-conformance";

const BASE = "https://gateway.example/onerecord";
const uris = {
  objectUri: (id: string) => `${BASE}/logistics-objects/${id}`,
  eventUri: (objectId: string, eventId: string) => `${BASE}/logistics-objects/${objectId}/logistics-events/${eventId}`,
};
const CODES = "https://onerecord.iata.org/ns/code-lists/";
const AWB = "020-12345675";
const SHIPMENT = `${BASE}/logistics-objects/shipment-${AWB}`;
const ID = "0b6c2d4e-6f81-4a3b-9c5d-7e8f9a0b1c2d";

const milestone = (overrides: Partial<MilestoneFacts> = {}): MilestoneFacts => ({
  id: ID,
  awb: AWB,
  state: "DEP",
  occurredAt: new Date("2026-10-16T15:45:00Z"),
  receivedAt: new Date("2026-10-16T15:46:02.123Z"),
  toaTimestamp: null,
  station: "FRA",
  flight: "LH400",
  carrier: null,
  ...overrides,
});

const partOfTen: CarrierFacts = {
  flightDate: "2026-10-16",
  discrepancy: null,
  shipment: "P",
  pieces: 4,
  weight: 200,
  weightUnit: "K",
};

describe("a milestone as its Shipment's logistics event", () => {
  test("a JSON milestone: a StatusUpdateEvent and LogisticsEvent with code, dates, ACTUAL, station, flight, the Shipment", async () => {
    const event = milestoneEvent(milestone(), uris);
    expect(event).toEqual({
      "@id": `${SHIPMENT}/logistics-events/${ID}`,
      "@type": ["cargo:StatusUpdateEvent", "cargo:LogisticsEvent"],
      "cargo:eventCode": { "@id": `${CODES}StatusCode#DEP` },
      "cargo:eventName": "Departed",
      "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-16T15:45:00Z" },
      "cargo:creationDate": { "@type": "xsd:dateTime", "@value": "2026-10-16T15:46:02.123Z" },
      "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
      "cargo:eventFor": { "@id": SHIPMENT },
      "cargo:eventLocation": { "@id": `${BASE}/logistics-objects/location-FRA` },
      "cargo:recordingOrganization": { "@id": `${BASE}/logistics-objects/organization-carrier` },
      "cargo:transportMovementReference": {
        "@id": `${BASE}/logistics-objects/transport-movement-lh400-2026-10-16`,
      },
    });
    await assertConforms(withContext(event));
  });

  test("an FSU's part shipment: partialEventIndicator, recordedPieceCount and recordedWeight in kilograms", async () => {
    const event = milestoneEvent(milestone({ carrier: partOfTen }), uris);
    expect(event).toMatchObject({
      "cargo:partialEventIndicator": true,
      "cargo:recordedPieceCount": 4,
      "cargo:recordedWeight": {
        "@type": "cargo:Value",
        "cargo:numericalValue": { "@type": "xsd:double", "@value": 200 },
        "cargo:unit": { "@id": `${CODES}MeasurementUnitCode#KGM` },
      },
    });
    await assertConforms(withContext(event));
    const whole = milestoneEvent(milestone({ carrier: { ...partOfTen, shipment: "T", weightUnit: "L" } }), uris);
    expect(whole["cargo:partialEventIndicator"]).toBe(false);
    expect(whole["cargo:recordedWeight"]).toMatchObject({ "cargo:unit": { "@id": `${CODES}MeasurementUnitCode#LBR` } });
  });

  test("a TOA is an ARR whose time is EXPECTED, dated at the new time of arrival", async () => {
    const toa = new Date("2026-10-17T05:30:00Z");
    const event = milestoneEvent(milestone({ state: "TOA", toaTimestamp: toa, station: "JFK" }), uris);
    expect(event).toMatchObject({
      "cargo:eventCode": { "@id": `${CODES}StatusCode#ARR` },
      "cargo:eventTimeType": { "@id": "cargo:EXPECTED" },
      "cargo:eventDate": { "@value": "2026-10-17T05:30:00Z" },
    });
    await assertConforms(withContext(event));
    const untimed = milestoneEvent(milestone({ state: "TOA" }), uris);
    expect(untimed["cargo:eventDate"]).toEqual({ "@type": "xsd:dateTime", "@value": "2026-10-16T15:45:00Z" });
  });

  test("a DIS takes the StatusCode member of its discrepancy; without one it has no eventCode and still conforms", async () => {
    const known = milestoneEvent(milestone({ state: "DIS", carrier: { ...partOfTen, discrepancy: "MSCA" } }), uris);
    expect(known["cargo:eventCode"]).toEqual({ "@id": `${CODES}StatusCode#DIS_MSCA` });
    await assertConforms(withContext(known));
    const unknown = milestoneEvent(milestone({ state: "DIS", carrier: { ...partOfTen, discrepancy: "XXXX" } }), uris);
    expect(unknown["cargo:eventCode"]).toBeUndefined();
    expect(unknown["cargo:eventName"]).toBe("Discrepancy reported (no discrepancy code given)");
    await assertConforms(withContext(unknown));
  });

  test("every gateway state maps to a conforming event; without station or flight those properties are absent", async () => {
    for (const state of STATUS_CODES) {
      const event = milestoneEvent(milestone({ state, station: null, flight: null }), uris);
      expect(event["cargo:eventLocation"]).toBeUndefined();
      expect(event["cargo:transportMovementReference"]).toBeUndefined();
      await assertConforms(withContext(event));
    }
  });

  test("the mapping can fail the check: an event with an unknown status code does not conform", async () => {
    const event = milestoneEvent(milestone(), uris);
    const broken = { ...event, "cargo:eventCode": { "@id": `${CODES}StatusCode#TOA` } };
    expect((await conformanceReport(withContext(broken))).conforms).toBe(false);
  });
});

describe("a carrier status that is no milestone", () => {
  const foh = {
    id: ID,
    awb: AWB,
    code: "FOH",
    occurredAt: null,
    receivedAt: new Date("2026-10-16T08:00:00Z"),
    station: "FRA",
    flight: null,
    carrier: { ...partOfTen, shipment: "T", pieces: 10, weight: 500 },
  };

  test("is an event when StatusCode has its code, dated when received if the message gave no time", async () => {
    const event = carrierStatusEvent(foh, uris)!;
    expect(event).toMatchObject({
      "cargo:eventCode": { "@id": `${CODES}StatusCode#FOH` },
      "cargo:eventName": "Freight on hand",
      "cargo:eventDate": { "@value": "2026-10-16T08:00:00Z" },
      "cargo:partialEventIndicator": false,
      "cargo:recordedPieceCount": 10,
    });
    await assertConforms(withContext(event));
    await assertConforms(withContext(carrierStatusEvent({ ...foh, code: "OCI" }, uris)!));
  });

  test("is none for a code StatusCode lacks (SSR, ULD, unknown codes)", () => {
    for (const code of ["SSR", "ULD", "XYZ", "TOA", "DIS"])
      expect(carrierStatusEvent({ ...foh, code }, uris)).toBeUndefined();
  });
});

describe("status codes", () => {
  test("StatusCode's members are the code list's; a non-member in its namespace is no label", () => {
    const list = codeLists.codeLists["https://onerecord.iata.org/ns/code-lists/StatusCode"].members;
    expect(STATUS_CODE_LABELS).toEqual(list.map((m) => m.label));
    expect(statusCodeLabelOf(`${CODES}StatusCode#DEP`)).toBe("DEP");
    expect(statusCodeLabelOf(`${CODES}StatusCode#TOA`)).toBeUndefined();
    expect(statusCodeLabelOf("https://example.com/codes#DEP")).toBeUndefined();
  });

  test("weight units are WeightUnitCode's members", () => {
    const members = codeLists.codeLists["https://onerecord.iata.org/ns/code-lists/WeightUnitCode"].members.map(
      (m) => m.iri,
    );
    expect(members).toEqual(expect.arrayContaining([weightUnitIri("K"), weightUnitIri("L")]));
    expect(weightUnitIri(null)).toBeUndefined();
  });

  test("a posted code and time type read back to the gateway's state, or to none", () => {
    expect(milestoneStateOf("DEP", undefined)).toBe("DEP");
    expect(milestoneStateOf("DEP", "ACTUAL")).toBe("DEP");
    expect(milestoneStateOf("DEP", "PLANNED")).toBeUndefined();
    expect(milestoneStateOf("ARR", "EXPECTED")).toBe("TOA");
    expect(milestoneStateOf("ARR", "ESTIMATED")).toBe("TOA");
    expect(milestoneStateOf("DIS_OFLD", undefined)).toBe("DIS");
    expect(milestoneStateOf("FOH", undefined)).toBeUndefined();
    expect(milestoneStateOf("BKD", "ACTUAL")).toBeUndefined();
  });

  test("a TransportMovement id names its flight and day, and reads back", () => {
    expect(transportMovementIdOf("LH400", "2026-10-16")).toBe("transport-movement-lh400-2026-10-16");
    expect(flightOfTransportMovementId("transport-movement-lh400-2026-10-16")).toBe("LH400");
    expect(flightOfTransportMovementId("transport-movement-x-2026-10-16")).toBeUndefined();
    expect(flightOfTransportMovementId("shipment-020-12345675")).toBeUndefined();
  });
});
