import type { App } from "../../src/app";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { type NotificationReceiver, startNotificationReceiver } from "../support/onerecord-outbox";
import { oneRecord } from "../support/onerecord-requests";
import { until } from "../support/webhooks";

const API = "https://onerecord.iata.org/ns/api#";
const AUDIENCE = "https://1r.carrier.example";
/** The gateway's own client at the token endpoint, that its notifications' tokens are asked as. */
const GATEWAY_CLIENT = "carrier-gateway";
const GATEWAY_SECRET = "notifications-secret";

/**
 * Subscriptions by OIDC agents: the subscriber is the token's Organization; its notifications go only
 * to the server the operator registered for it (partner:add), never to one its URI names, each with a
 * token of that partner's audience.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record subscriptions by OIDC agents on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let app: App;
    let url: string;
    let base: string;

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      issuer.addClient(GATEWAY_CLIENT, GATEWAY_SECRET);
      ({ app, url } = await startApp(backend, disposers, {
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
        ONE_RECORD_OIDC_AUDIENCE: AUDIENCE,
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: GATEWAY_CLIENT,
        ONE_RECORD_CLIENT_SECRET: GATEWAY_SECRET,
        ONE_RECORD_TOKEN_AUDIENCE: "https://default-audience.test",
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
      "api:notifyRequestStatusChange": true,
    });
    const shipmentOf = async (awb: string) => {
      const ingested = await postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb, state: "RCS", station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(ingested.status).toBe(202);
      return `${base}/logistics-objects/shipment-${awb}`;
    };
    /** An agent whose Organization URI is on the receiver's server: before, its notifications went there unasked. */
    const agentOn = (to: NotificationReceiver, name: string) =>
      `${to.endpoint.replace(/\/notifications$/, "")}/logistics-objects/${name}`;
    const serverOf = (to: NotificationReceiver) => to.endpoint.replace(/\/notifications$/, "");
    const audienceOf = (token: string | undefined) =>
      (JSON.parse(Buffer.from(token!.split(".")[1]!, "base64url").toString()) as { aud: unknown }).aud;
    const counts = async () => ({
      subscriptions: await app.database.prisma.oneRecordSubscription.count(),
      deliveries: await app.database.prisma.delivery.count({ where: { kind: "ONE_RECORD" } }),
    });

    it("refuses (422) an agent no partner server is registered for, whatever server its URI names: nothing stored, nothing queued, no POST", async () => {
      const to = await startNotificationReceiver(disposers);
      const agent = agentOn(to, "unregistered-org");
      const topic = await shipmentOf("020-42999983");
      const token = await issuer.token({ logistics_agent_uri: agent, aud: AUDIENCE, scope: "events:read" });
      const before = await counts();
      const res = await oneRecord(`${base}/subscriptions`, { method: "POST", token, body: subscription(agent, topic) });
      expect(res.status).toBe(422);
      expect(JSON.stringify(res.body)).toContain("partner:add");
      expect(await counts()).toEqual(before);
      // A milestone of the topic afterwards: nothing for the agent either.
      await postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb: "020-42999983", state: "DEP", station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(await counts()).toEqual(before);
      expect(to.posts).toEqual([]);
    });

    it("sends a registered agent's notifications to its registered server with a token of its partner's audience (X's to X, Y's to Y), and takes a third party's as pending, without the agent's scopes", async () => {
      const [x, y] = [await startNotificationReceiver(disposers), await startNotificationReceiver(disposers)];
      const partners = createPartnerAdmin(app.database.prisma, base);
      // X's agent URI names another server than X's registered one: the registered one wins.
      const agentX = "https://1r.forwarder.example/api/logistics-objects/forwarder-org";
      const agentY = agentOn(y, "handler-org");
      await partners.add({ serverUrl: serverOf(x), agentUri: agentX, audience: "https://x.test" });
      await partners.add({ serverUrl: serverOf(y), agentUri: agentY, audience: "https://y.test" });
      const topic = await shipmentOf("020-42999994");
      const ids: Record<string, string> = {};
      for (const [agent, to] of [
        [agentX, x],
        [agentY, y],
      ] as const) {
        const token = await issuer.token({ logistics_agent_uri: agent, aud: AUDIENCE, scope: "events:read" });
        const res = await oneRecord(`${base}/subscriptions`, {
          method: "POST",
          token,
          body: subscription(agent, topic),
        });
        expect(res.status).toBe(201);
        const id = res.headers.get("location")!.split("/").pop()!;
        ids[agent] = id;
        expect(await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } })).toMatchObject({
          status: "REQUEST_ACCEPTED",
          subscriber: agent,
          requestedBy: agent,
          endpoint: to.endpoint,
          clientId: null,
        });
        const read = await oneRecord(res.headers.get("location")!, { token });
        expect(read.body).toMatchObject({
          "api:isRequestedBy": { "@id": agent },
          "api:hasSubscription": { "api:hasSubscriber": { "@id": agent } },
        });
      }
      // Each told SUBSCRIPTION_REQUEST_ACCEPTED at its own server, with a token minted for its own audience.
      await until(() => x.posts.length >= 1 && y.posts.length >= 1, { what: "both status notifications" });
      expect(x.posts[0]!.body).toContain("SUBSCRIPTION_REQUEST_ACCEPTED");
      expect(audienceOf(x.posts[0]!.token)).toBe("https://x.test");
      expect(audienceOf(y.posts[0]!.token)).toBe("https://y.test");
      expect(x.posts[0]!.token).not.toBe(y.posts[0]!.token);

      // A third party the agent names waits for the holder, and reads with its own grants only: never
      // with the scopes of the agent that asked for it.
      const token = await issuer.token({ logistics_agent_uri: agentX, aud: AUDIENCE, scope: "events:read" });
      const other = "https://1r.forwarder.example/api/logistics-objects/someone-else";
      const thirdParty = await oneRecord(`${base}/subscriptions`, {
        method: "POST",
        token,
        body: subscription(other, topic),
      });
      expect(thirdParty.status).toBe(201);
      const id = thirdParty.headers.get("location")!.split("/").pop()!;
      expect(await app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id } })).toMatchObject({
        status: "REQUEST_PENDING",
        subscriber: other,
        requestedBy: agentX,
        endpoint: "https://1r.forwarder.example/api/notifications",
        agentScopes: [],
      });
    });
  });
});
