import type { App } from "../../src/app";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const API = "https://onerecord.iata.org/ns/api#";
const XSD = "http://www.w3.org/2001/XMLSchema#";
const CONTEXT = { cargo: CARGO, api: API, xsd: XSD };

/** A Change replacing `p`'s value `from` with `to` on `uri` at revision 1. */
const change = (uri: string, p: string, from: string, to: string) => ({
  "@context": CONTEXT,
  "@type": "api:Change",
  "api:hasLogisticsObject": { "@id": uri },
  "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "1" },
  "api:hasOperation": [
    ["api:DELETE", from],
    ["api:ADD", to],
  ].map(([op, value]) => ({
    "@type": "api:Operation",
    "api:op": { "@id": op },
    "api:s": uri,
    "api:p": `${CARGO}${p}`,
    "api:o": { "@type": "api:OperationObject", "api:hasDatatype": `${XSD}string`, "api:hasValue": value },
  })),
});

/** Every body the server answers here, checked against the ontology's shapes. */
async function conforming(answer: Promise<OneRecordAnswer>): Promise<OneRecordAnswer> {
  const res = await answer;
  if (res.body !== undefined) await assertConforms(res.body);
  return res;
}

describe.each(BEHAVIOUR_BACKENDS)("ONE Record clients' Organizations on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let forwarderKey: string;
    let forwarderOrganization: string;
    /** Another client, with no scope of ONE Record: any authenticated caller reads an Organization. */
    let strangerKey: string;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${app.url()}/onerecord`;
      const forwarder = await app.services.clients.createClient({ name: "Forwarder GmbH", callbackPrefixes: ["*"] });
      forwarderKey = (await app.services.clients.issueKey(forwarder.clientId, ["objects:write", "events:write"])).key;
      forwarderOrganization = `${base}/logistics-objects/organization-${forwarder.clientId}`;
      const stranger = await app.services.clients.createClient({ name: "stranger", callbackPrefixes: ["*"] });
      strangerKey = (await app.services.clients.issueKey(stranger.clientId, ["subscriptions"])).key;
    });
    afterAll(() => disposers.disposeAll());

    it("an action request's isRequestedBy resolves to the client's Organization, readable by any caller", async () => {
      const piece = await conforming(
        oneRecord(`${base}/logistics-objects`, {
          token: forwarderKey,
          body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
        }),
      );
      expect(piece.status).toBe(201);
      const pieceUri = piece.headers.get("location")!;
      const requested = await conforming(
        oneRecord(pieceUri, {
          method: "PATCH",
          token: forwarderKey,
          body: change(pieceUri, "goodsDescription", "BOOKS", "MAGAZINES"),
        }),
      );
      expect(requested.status).toBe(201);
      const request = await conforming(oneRecord(requested.headers.get("location")!, { token: forwarderKey }));
      expect(request.status).toBe(200);
      const requester = request.body["api:isRequestedBy"]["@id"] as string;
      expect(requester).toBe(forwarderOrganization);

      for (const token of [forwarderKey, strangerKey]) {
        const organization = await conforming(oneRecord(requester, { token }));
        expect(organization.status).toBe(200);
        expect(organization.body).toMatchObject({
          "@id": forwarderOrganization,
          "@type": "cargo:Organization",
          "cargo:name": "Forwarder GmbH",
        });
        expect(organization.headers.get("type")).toBe(`${CARGO}Organization`);
        expect([organization.headers.get("revision"), organization.headers.get("latest-revision")]).toEqual(["1", "1"]);
        expect(organization.headers.get("last-modified")).toMatch(/GMT$/);
      }
      const head = await oneRecord(requester, { token: strangerKey, method: "HEAD" });
      expect([head.status, head.headers.get("type")]).toEqual([200, `${CARGO}Organization`]);
    });

    it("takes no changes and no events, from its own client either (403)", async () => {
      const patched = await conforming(
        oneRecord(forwarderOrganization, {
          method: "PATCH",
          token: forwarderKey,
          body: change(forwarderOrganization, "name", "Forwarder GmbH", "Someone else"),
        }),
      );
      expect(patched.status).toBe(403);
      expect(patched.body).toMatchObject({ "@type": "api:Error" });
      const event = await conforming(
        oneRecord(`${forwarderOrganization}/logistics-events`, {
          method: "POST",
          token: forwarderKey,
          body: {
            "@context": CONTEXT,
            "@type": "cargo:LogisticsEvent",
            "cargo:eventCode": { "@id": "https://forwarder.example/codes#RENAMED" },
            "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-14T08:00:00Z" },
          },
        }),
      );
      expect(event.status).toBe(403);
      const still = await conforming(oneRecord(forwarderOrganization, { token: strangerKey }));
      expect(still.body["cargo:name"]).toBe("Forwarder GmbH");
    });

    it("answers 404 for an organization-<uuid> that is no client", async () => {
      for (const id of ["organization-7d1e0a5c-3b2f-4c8e-9a61-0f4b2d9e8c17", "organization-7d1e0a5c"]) {
        const res = await conforming(oneRecord(`${base}/logistics-objects/${id}`, { token: forwarderKey }));
        expect(res.status).toBe(404);
        expect(res.body).toMatchObject({ "@type": "api:Error" });
      }
    });
  });
});
