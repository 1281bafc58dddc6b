import type { App } from "../../src/app";
import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { oneRecord } from "../support/onerecord-requests";

const API = "https://onerecord.iata.org/ns/api#";
const AUDIENCE = "https://1r.carrier.example";
/** The forwarder's Organization on its own ONE Record server: its notifications go to that server. */
const AGENT = "https://1r.forwarder.example/api/logistics-objects/forwarder-org";

/** Subscriptions by OIDC agents: the subscriber is the token's Organization, its server the one that URI is on. */
describe.each(BACKENDS)("ONE Record subscriptions by OIDC agents on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let app: App;
    let url: string;
    let base: string;

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      ({ app, url } = await startApp(backend, disposers, {
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
        ONE_RECORD_OIDC_AUDIENCE: AUDIENCE,
        RATE_LIMIT_PER_SECOND: "0",
      }));
      base = `${url}/onerecord`;
    });
    afterAll(() => disposers.disposeAll());

    const subscription = (subscriber: string, topic: string) => ({
      "@context": { api: API },
      "@type": "api:Subscription",
      "api:hasSubscriber": { "@id": subscriber },
      "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
      "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
      "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": topic },
    });

    it("sends an agent's notifications to the server its Organization URI is on, and refuses it a third party's", async () => {
      const awb = "020-42999994";
      const ingested = await postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb, state: "RCS", station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(ingested.status).toBe(202);
      const topic = `${base}/logistics-objects/shipment-${awb}`;
      const token = await issuer.token({ logistics_agent_uri: AGENT, aud: AUDIENCE, scope: "events:read" });
      const res = await oneRecord(`${base}/subscriptions`, { method: "POST", token, body: subscription(AGENT, topic) });
      expect(res.status).toBe(201);
      const id = res.headers.get("location")!.split("/").pop()!;
      expect(await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: "REQUEST_ACCEPTED",
        subscriber: AGENT,
        requestedBy: AGENT,
        endpoint: "https://1r.forwarder.example/api/notifications",
        origin: "https://1r.forwarder.example:443",
        clientId: null,
      });
      const read = await oneRecord(res.headers.get("location")!, { token });
      expect(read.body).toMatchObject({
        "api:isRequestedBy": { "@id": AGENT },
        "api:hasSubscription": { "api:hasSubscriber": { "@id": AGENT } },
      });

      const before = await app.database.prisma.oneRecordSubscription.count();
      const other = "https://1r.forwarder.example/api/logistics-objects/someone-else";
      const refused = await oneRecord(`${base}/subscriptions`, {
        method: "POST",
        token,
        body: subscription(other, topic),
      });
      expect(refused.status).toBe(422);
      expect([refused.body["api:hasErrorDetail"]].flat()).toEqual([
        expect.objectContaining({ "api:hasProperty": `${API}hasSubscriber` }),
      ]);
      expect(await app.database.prisma.oneRecordSubscription.count()).toBe(before);
    });
  });
});
