import type { Scope } from "../../src/clients/credentials";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { assertConforms } from "../support/onerecord-conformance";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";

/**
 * Who reads which logistics objects, over HTTP (docs/ONE-RECORD.md "Identity and access"): a client's
 * objects are its own and those it is granted, an AWB's take events:read, stations anyone's; an OIDC
 * agent is an Organization like a client.
 */
const AWB = "020-12345675";
const AGENT = "https://1r.forwarder.example/logistics-objects/organization-forwarder";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record access on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let issuer: OidcIssuer;
    let keyA: string;
    let keyB: string;
    let keyC: string;
    let clientB: { clientId: string; key: string };

    const newClient = async (...scopes: Scope[]) => {
      const { clientId } = await app.services.clients.createClient({
        name: `client ${scopes.join(" ")}`,
        callbackPrefixes: ["*"],
      });
      return { clientId, key: (await app.services.clients.issueKey(clientId, scopes)).key };
    };

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
      }));
      base = `${app.url()}/onerecord`;
      keyA = (await newClient("objects:write")).key;
      // B holds every scope but admin: scopes do not open another client's objects.
      clientB = await newClient("objects:write", "events:read", "events:write", "subscriptions");
      keyB = clientB.key;
      keyC = (await newClient("subscriptions")).key;
    });
    afterAll(() => disposers.disposeAll());

    const piece = { "@context": { cargo: "https://onerecord.iata.org/ns/cargo#" }, "@type": "cargo:Piece" };

    /** Creates a Piece as `token`'s caller; answers its URI. */
    async function created(token: string): Promise<string> {
      const res = await oneRecord(`${base}/logistics-objects`, { token, body: piece });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    }

    async function expectDenied(res: OneRecordAnswer): Promise<void> {
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ "@type": "api:Error", "api:hasErrorDetail": [{ "api:hasCode": "403" }] });
      await assertConforms(res.body);
    }

    it("one client cannot read another client's objects, whatever its scopes, until it is granted", async () => {
      const uri = await created(keyA);
      const own = await oneRecord(uri, { token: keyA });
      expect(own.status).toBe(200);
      await assertConforms(own.body);
      await expectDenied(await oneRecord(uri, { token: keyB }));
      expect((await oneRecord(uri, { token: keyB, method: "HEAD" })).status).toBe(403);
      await expectDenied(await oneRecord(`${uri}/audit-trail`, { token: keyB }));
      await expectDenied(await oneRecord(`${uri}/logistics-events`, { token: keyB }));

      const grants = createOperatorGrants(app.database.prisma, base);
      await grants.grant(
        uri.slice(uri.lastIndexOf("/") + 1),
        `${base}/logistics-objects/organization-${clientB.clientId}`,
      );
      const granted = await oneRecord(uri, { token: keyB });
      expect(granted.status).toBe(200);
      await assertConforms(granted.body);
      await expectDenied(await oneRecord(uri, { token: keyC }));
    });

    it("an AWB's Waybill and Shipment take events:read; stations and the carrier's Organization any caller", async () => {
      const milestone = { awb: AWB, state: "DEP", timestamp: "2026-11-21T08:00:00Z", station: "FRA", flight: "LH8160" };
      const ingested = await postJson(`${app.url()}/carrier/handling/shipment/events`, milestone, {
        authorization: `Bearer ${ADMIN_KEY}`,
      });
      expect(ingested.status).toBe(202);
      for (const id of [`waybill-${AWB}`, `shipment-${AWB}`]) {
        await expectDenied(await oneRecord(`${base}/logistics-objects/${id}`, { token: keyC }));
        const read = await oneRecord(`${base}/logistics-objects/${id}`, { token: keyB });
        expect(read.status).toBe(200);
        await assertConforms(read.body);
      }
      expect((await oneRecord(`${base}/logistics-objects/location-FRA`, { token: keyC })).status).toBe(200);
      expect((await oneRecord(`${base}/logistics-objects/organization-carrier`, { token: keyC })).status).toBe(200);
    });

    it("an OIDC agent's objects are its Organization's: a client cannot read them", async () => {
      const token = await issuer.token({ logistics_agent_uri: AGENT, scope: "objects:write" });
      const uri = await created(token);
      expect((await oneRecord(uri, { token })).status).toBe(200);
      await expectDenied(await oneRecord(uri, { token: keyB }));
      const otherAgent = await issuer.token({ logistics_agent_uri: `${AGENT}-2`, scope: "objects:write events:read" });
      await expectDenied(await oneRecord(uri, { token: otherAgent }));
    });

    it("creating an object needs objects:write", async () => {
      await expectDenied(await oneRecord(`${base}/logistics-objects`, { token: keyC, body: piece }));
      const noScope = await issuer.token({ logistics_agent_uri: AGENT });
      await expectDenied(await oneRecord(`${base}/logistics-objects`, { token: noScope, body: piece }));
    });
  });
});
