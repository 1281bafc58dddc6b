import type { Scope } from "../../src/clients/credentials";
import {
  canCreate,
  canGrant,
  canPostEvent,
  canRead,
  canWrite,
  type ObjectMeta,
} from "../../src/onerecord/identity/access-policy";
import type { OneRecordCaller } from "../../src/onerecord/identity/caller";
import { CARRIER_ORGANIZATION_ID } from "../../src/onerecord/identity/organizations";

/** The access rules over every kind of object and caller (docs/ONE-RECORD.md "Identity and access"). */
const CARGO = "https://onerecord.iata.org/ns/cargo#";

const caller = (organizationId: string, ...scopes: Scope[]): OneRecordCaller => ({
  organizationId,
  organizationUri: `https://1r.example/logistics-objects/${organizationId}`,
  scopes: new Set(scopes),
});

const A = "organization-aaaa";
const B = "organization-bbbb";
const waybill: ObjectMeta = {
  id: "waybill-020-12345675",
  type: `${CARGO}Waybill`,
  awb: "020-12345675",
  createdBy: CARRIER_ORGANIZATION_ID,
};
const shipment: ObjectMeta = { ...waybill, id: "shipment-020-12345675", type: `${CARGO}Shipment` };
const station: ObjectMeta = {
  id: "location-FRA",
  type: `${CARGO}Location`,
  awb: null,
  createdBy: CARRIER_ORGANIZATION_ID,
};
const carrier: ObjectMeta = {
  id: CARRIER_ORGANIZATION_ID,
  type: `${CARGO}Organization`,
  createdBy: CARRIER_ORGANIZATION_ID,
};
const piece: ObjectMeta = {
  id: "7d1c2f4e-9d7a-4c1e-8b1a-3f0c2d4e5f60",
  type: `${CARGO}Piece`,
  awb: null,
  createdBy: A,
};
const pieceSharedWithB: ObjectMeta = { ...piece, readers: [B] };
/** An API client's Organization, served from the carrier's records. */
const clientOrganization: ObjectMeta = {
  id: "organization-0f8e2c44-5b1d-4a4e-9c55-1d2b3c4d5e6f",
  type: `${CARGO}Organization`,
  createdBy: CARRIER_ORGANIZATION_ID,
};
const clientLocation: ObjectMeta = { id: "loc-1", type: `${CARGO}Location`, createdBy: A };

describe("reading", () => {
  it("an AWB's Waybill and Shipment take events:read (or objects:write), whoever created them", () => {
    for (const object of [waybill, shipment, { ...shipment, createdBy: A }]) {
      expect(canRead(caller(B, "events:read"), object)).toBe(true);
      expect(canRead(caller(B, "objects:write"), object)).toBe(true);
      expect(canRead(caller(B, "events:write", "subscriptions"), object)).toBe(false);
      expect(canRead(caller(B), object)).toBe(false);
    }
  });

  it("an AWB's Waybill and Shipment also by an Organization granted them (an access delegation), without scopes", () => {
    for (const object of [waybill, shipment]) {
      expect(canRead(caller(B), { ...object, readers: [B] })).toBe(true);
      expect(canRead(caller(A, "events:write"), { ...object, readers: [B] })).toBe(false);
      expect(canWrite(caller(B), { ...object, readers: [B] })).toBe(false);
    }
  });

  it("the carrier's stations and Organization, and its clients' Organizations, are read by any authenticated caller", () => {
    for (const object of [station, carrier, clientOrganization]) expect(canRead(caller(B), object)).toBe(true);
  });

  it("other objects by their creator and the Organizations it granted, whatever their scopes", () => {
    expect(canRead(caller(A), piece)).toBe(true);
    expect(canRead(caller(B, "events:read", "events:write", "objects:write", "admin"), piece)).toBe(false);
    expect(canRead(caller(B), pieceSharedWithB)).toBe(true);
    expect(canRead(caller("organization-cccc", "events:read"), pieceSharedWithB)).toBe(false);
    // A client's own Location is no station: it is the client's.
    expect(canRead(caller(B), clientLocation)).toBe(false);
  });

  it("an OIDC agent is its Organization like any other", () => {
    const agent = "https://1r.forwarder.example/logistics-objects/forwarder";
    expect(canRead(caller(agent), { ...piece, createdBy: agent })).toBe(true);
    expect(canRead(caller(agent), { ...piece, readers: [agent] })).toBe(true);
    expect(canRead(caller(agent), piece)).toBe(false);
  });
});

describe("writing", () => {
  it("needs objects:write: the AWB's objects for any holder of it, other objects for their creator", () => {
    expect(canWrite(caller(B, "objects:write"), waybill)).toBe(true);
    expect(canWrite(caller(A, "objects:write"), piece)).toBe(true);
    expect(canWrite(caller(B, "objects:write"), piece)).toBe(false);
    expect(canWrite(caller(A, "events:read", "events:write", "admin"), piece)).toBe(false);
    expect(canWrite(caller(B, "events:read"), waybill)).toBe(false);
  });

  it("a grant gives reading, never writing", () => {
    expect(canWrite(caller(B, "objects:write"), pieceSharedWithB)).toBe(false);
  });

  it("nobody writes a client's Organization, not even that client", () => {
    const itself = caller(clientOrganization.id, "objects:write", "events:write");
    expect(canWrite(itself, clientOrganization)).toBe(false);
    expect(canPostEvent(itself, clientOrganization)).toBe(false);
    expect(canGrant(itself, clientOrganization)).toBe(false);
  });

  it("nobody writes the stations or the carrier's Organization", () => {
    for (const object of [station, carrier])
      expect(canWrite(caller(CARRIER_ORGANIZATION_ID, "objects:write", "admin"), object)).toBe(false);
  });

  it("creating objects needs objects:write", () => {
    expect(canCreate(caller(A, "objects:write"))).toBe(true);
    expect(canCreate(caller(A, "events:write", "events:read", "admin", "subscriptions"))).toBe(false);
  });
});

describe("posting events", () => {
  it("needs events:write: on the AWB's objects that is enough, as for the legacy ingestion", () => {
    expect(canPostEvent(caller(B, "events:write"), shipment)).toBe(true);
    expect(canPostEvent(caller(B, "events:read", "objects:write"), shipment)).toBe(false);
  });

  it("on other objects the caller must also read it", () => {
    expect(canPostEvent(caller(A, "events:write"), piece)).toBe(true);
    expect(canPostEvent(caller(B, "events:write"), pieceSharedWithB)).toBe(true);
    expect(canPostEvent(caller(B, "events:write"), piece)).toBe(false);
    expect(canPostEvent(caller(A), piece)).toBe(false);
  });

  it("not by an Organization whose grant an access delegation made: it reads only", () => {
    const delegated: ObjectMeta = { ...piece, readers: [B], delegates: [B] };
    expect(canRead(caller(B), delegated)).toBe(true);
    expect(canPostEvent(caller(B, "events:write"), delegated)).toBe(false);
    expect(canPostEvent(caller(A, "events:write"), delegated)).toBe(true);
    expect(canPostEvent(caller(B, "events:write"), { ...shipment, readers: [B], delegates: [B] })).toBe(true);
  });

  it("the stations and the carrier's Organization take none", () => {
    for (const object of [station, carrier]) expect(canPostEvent(caller(B, "events:write"), object)).toBe(false);
  });
});

describe("granting", () => {
  it("only the creator grants, and not the carrier's reference data", () => {
    expect(canGrant(caller(A), piece)).toBe(true);
    expect(canGrant(caller(B, "objects:write", "admin"), pieceSharedWithB)).toBe(false);
    expect(canGrant(caller(CARRIER_ORGANIZATION_ID), station)).toBe(false);
  });
});
