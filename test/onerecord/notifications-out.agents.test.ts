import type { App } from "../../src/app";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const API = "https://onerecord.iata.org/ns/api#";
const CONTEXT = { cargo: "https://onerecord.iata.org/ns/cargo#", api: API, xsd: "http://www.w3.org/2001/XMLSchema#" };
const SHIPMENT = "https://onerecord.iata.org/ns/cargo#Shipment";
let serial = 6_000_000 + (process.pid % 1000) * 100;
/** A fresh AWB, its check digit right. */
const nextAwb = () => {
  const n = String(++serial);
  return `020-${n}${Number(n) % 7}`;
};

type Body = Record<string, any>;

/**
 * Notifications to OIDC agents' subscriptions (docs/ONE-RECORD.md "What is notified", Matching): an
 * agent reads AWBs by the scopes its token had when it subscribed, as an API client does by its keys'
 * scopes, else only by the grants it holds now. So a delegate's subscription stops with its
 * delegation (revoked or expired), and an agent with events:read is told through a type subscription.
 * Real HTTP, a real OIDC issuer, both databases; the delivery worker is off, so the queued rows stay.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications to OIDC agents on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let app: App;
    let base: string;
    /** A forwarder's key that reads AWBs: it delegates reading of a Shipment to an agent. */
    let reader: string;
    let agentSerial = 0;
    /** A new agent, registered as a partner on its own server (its notifications go there), and a token with `scope` (none: no claim). */
    const agent = async (scope: string) => {
      const server = `https://1r.gha${++agentSerial}.example/api`;
      const uri = `${server}/logistics-objects/organization-gha`;
      await createPartnerAdmin(app.database.prisma, base).add({ serverUrl: server, agentUri: uri });
      const claims = scope === "" ? { logistics_agent_uri: uri } : { logistics_agent_uri: uri, scope };
      return { uri, token: await issuer.token(claims, { expiresInSeconds: 3600 }) };
    };

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        DELIVERY_WORKER: "false",
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
      }));
      base = `${app.url()}/onerecord`;
      const { clientId } = await app.services.clients.createClient({ name: "forwarder", callbackPrefixes: ["*"] });
      reader = (await app.services.clients.issueKey(clientId, ["events:read"])).key;
    });
    afterAll(() => disposers.disposeAll());

    const shipmentUri = (awb: string) => `${base}/logistics-objects/shipment-${awb}`;
    const milestone = async (awb: string, state: string) => {
      const res = await postJson(
        `${app.url()}/carrier/handling/shipment/events`,
        { awb, state, station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
    };
    /** The reader delegates reading the AWB's Shipment to `delegate`: the AccessDelegationRequest's URI. */
    const delegateTo = async (awb: string, delegate: string): Promise<string> => {
      const res = await oneRecord(`${base}/access-delegations`, {
        token: reader,
        body: {
          "@context": CONTEXT,
          "@type": "api:AccessDelegation",
          "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
          "api:isRequestedFor": [{ "@id": delegate }],
          "api:hasLogisticsObject": [{ "@id": shipmentUri(awb) }],
        },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };
    /** `token`'s caller subscribes to `topic` (the Shipment's URI, or its class): the accepted request's id. */
    const subscribe = async (token: string, subscriber: string, topicType: string, topic: string) => {
      const res = await oneRecord(`${base}/subscriptions`, {
        token,
        body: {
          "@context": { api: API },
          "@type": "api:Subscription",
          "api:hasSubscriber": { "@id": subscriber },
          "api:hasTopicType": { "@id": `api:${topicType}` },
          "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": topic },
          "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
        },
      });
      expect(res.status).toBe(201);
      const id = res.headers.get("location")!.split("/").pop()!;
      const row = await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } });
      expect(row.status).toBe("REQUEST_ACCEPTED");
      return id;
    };
    /** The milestones (by state) a subscription was told of about `awb`. */
    const toldOf = async (subscriptionId: string, awb: string): Promise<string[]> => {
      const rows = await app.database.prisma.delivery.findMany({ where: { oneRecordSubscriptionId: subscriptionId } });
      const bodies = rows.map((r) => JSON.parse(r.payload) as Body);
      for (const body of bodies) await assertConforms(body);
      const events = await app.database.prisma.statusEvent.findMany({ where: { awb } });
      const stateOf = new Map(events.map((e) => [`${shipmentUri(awb)}/logistics-events/${e.id}`, e.state]));
      return bodies
        .filter((b) => b["api:hasLogisticsObject"]["@id"] === shipmentUri(awb))
        .map((b) => stateOf.get(b["api:hasLogisticsEvent"]["@id"]) ?? "?")
        .sort();
    };

    it("a delegate's subscription to the Shipment is told while its delegation stands, nothing once it is revoked", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const gha = await agent("");
      const request = await delegateTo(awb, gha.uri);
      const subscription = await subscribe(gha.token, gha.uri, "LOGISTICS_OBJECT_IDENTIFIER", shipmentUri(awb));
      const row = await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id: subscription } });
      expect(row.agentScopes).toEqual([]);
      await milestone(awb, "MAN");
      expect(await toldOf(subscription, awb)).toEqual(["MAN"]);
      expect((await oneRecord(request, { token: reader, method: "DELETE" })).status).toBe(204);
      await milestone(awb, "DEP");
      expect(await toldOf(subscription, awb)).toEqual(["MAN"]);
    });

    it("a delegate's subscription to the Shipment is told nothing once its delegation's grant has expired", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const gha = await agent("subscriptions");
      await delegateTo(awb, gha.uri);
      const subscription = await subscribe(gha.token, gha.uri, "LOGISTICS_OBJECT_IDENTIFIER", shipmentUri(awb));
      await milestone(awb, "MAN");
      expect(await toldOf(subscription, awb)).toEqual(["MAN"]);
      // Its time passed (as the delegation's expiresAt would have it).
      await app.database.prisma.logisticsObjectGrant.updateMany({
        where: { objectId: `shipment-${awb}`, organizationId: gha.uri },
        data: { expiresAt: new Date(Date.now() - 1_000) },
      });
      await milestone(awb, "DEP");
      expect(await toldOf(subscription, awb)).toEqual(["MAN"]);
    });

    it("an agent whose token had events:read is told through its subscription to cargo:Shipment; one without, of its grants' AWBs only", async () => {
      const scoped = await agent("events:read");
      const byScope = await subscribe(scoped.token, scoped.uri, "LOGISTICS_OBJECT_TYPE", SHIPMENT);
      const delegate = await agent("");
      const byGrant = await subscribe(delegate.token, delegate.uri, "LOGISTICS_OBJECT_TYPE", SHIPMENT);
      const [granted, other] = [nextAwb(), nextAwb()];
      await milestone(granted, "RCS");
      await milestone(other, "RCS");
      await delegateTo(granted, delegate.uri);
      await milestone(granted, "DEP");
      await milestone(other, "DEP");
      expect(await toldOf(byScope, granted)).toEqual(["DEP", "RCS"]);
      expect(await toldOf(byScope, other)).toEqual(["DEP", "RCS"]);
      expect(await toldOf(byGrant, granted)).toEqual(["DEP"]);
      expect(await toldOf(byGrant, other)).toEqual([]);
    });
  });
});
