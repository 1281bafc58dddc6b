import type { App } from "../../src/app";
import { createSubscriptionWishes } from "../../src/onerecord/notifications-in/subscription-wishes";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { graphql, postJson } from "../support/http";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";
import { startReceiver } from "../support/receiver";
import { until } from "../support/webhooks";

/**
 * Two ONE Record nodes on loopback, each a whole gateway with its own database and identity: A, the
 * carrier's node that holds the AWBs and publishes, and B, another carrier's node that subscribes. One
 * OIDC issuer both trust signs the tokens each node's token client obtains with its own client id
 * (client-credentials), naming that node's carrier Organization as `logistics_agent_uri`. Every flow is
 * asserted at the other node: what A sent is looked for in what B stored from its POST /notifications,
 * and what B asked of A through A's own API.
 */
const API = "https://onerecord.iata.org/ns/api#";
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const STATUS = "https://onerecord.iata.org/ns/code-lists/StatusCode#";
const XSD_ANY_URI = "http://www.w3.org/2001/XMLSchema#anyURI";
const CONTEXT = { api: API, cargo: CARGO, xsd: "http://www.w3.org/2001/XMLSchema#" };
/** The audience every node's tokens are asked for and every node requires. */
const AUDIENCE = "urn:test:onerecord-nodes";
const admin = { authorization: `Bearer ${ADMIN_KEY}` };

let serial = 7_000_000 + (process.pid % 1000) * 100;
const nextAwb = () => {
  const n = String(++serial);
  return `020-${n}${Number(n) % 7}`;
};

type Body = Record<string, any>;

/** One node: the app, its ONE Record base URL, its carrier Organization's URI and its token client's credentials. */
interface OneRecordNode {
  app: App;
  url: string;
  base: string;
  organization: string;
  clientId: string;
  secret: string;
}

/** A notification as B stored it (expanded JSON-LD), with what the tests read of it. */
interface Stored {
  notificationId: string | null;
  eventType: string;
  object: string | undefined;
  event: string | undefined;
  triggeredBy: string | undefined;
  body: Body;
  sender: string;
}

const idOf = (body: Body, property: string): string | undefined => body[`${API}${property}`]?.[0]?.["@id"];

describe.each(BEHAVIOUR_BACKENDS)("two ONE Record nodes on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let webhooks: Awaited<ReturnType<typeof startReceiver>>;
    let a: OneRecordNode;
    let b: OneRecordNode;
    /** An API client of A that follows AWBs the legacy way (callbacks) and is B's partner account at A. */
    let follower: { clientId: string; key: string };

    const startNode = async (clientId: string): Promise<OneRecordNode> => {
      const secret = `${clientId}-secret`;
      const { app, url } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        DELIVERY_POLL_MS: "100",
        // The proposal loop every 200 ms (10 s by default): the publisher-initiated test waits for it.
        ONE_RECORD_PROPOSAL_INTERVAL_MS: "200",
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
        ONE_RECORD_OIDC_AUDIENCE: AUDIENCE,
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: clientId,
        ONE_RECORD_CLIENT_SECRET: secret,
        ONE_RECORD_TOKEN_AUDIENCE: AUDIENCE,
        // The node reads the AWBs of the nodes it subscribes to, as a forwarder's key with events:read does.
        ONE_RECORD_TOKEN_SCOPE: "events:read",
      });
      const base = `${url}/onerecord`;
      const organization = `${base}/logistics-objects/organization-carrier`;
      issuer.addClient(clientId, secret, { logistics_agent_uri: organization });
      return { app, url, base, organization, clientId, secret };
    };

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      webhooks = await startReceiver();
      disposers.add(() => webhooks.close());
      a = await startNode("node-a");
      b = await startNode("node-b");
      // A sends notifications only to servers its operator registered: B's, for B's agent URI.
      await createPartnerAdmin(a.app.database.prisma, a.base).add({ serverUrl: b.base, agentUri: b.organization });
      // B takes notifications only from partners its operator registered: A's agent URI.
      await createPartnerAdmin(b.app.database.prisma, b.base).add({ serverUrl: a.base, agentUri: a.organization });
      const created = await a.app.services.clients.createClient({ name: "follower", callbackPrefixes: ["*"] });
      follower = {
        clientId: created.clientId,
        key: (await a.app.services.clients.issueKey(created.clientId, ["subscriptions", "events:read"])).key,
      };
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    /** B's access token, as B's own token client gets it: client credentials at the shared issuer. */
    const tokenOf = async (node: OneRecordNode): Promise<string> => {
      const res = await fetch(issuer.tokenUrl, {
        method: "POST",
        headers: {
          authorization: `Basic ${Buffer.from(`${node.clientId}:${node.secret}`).toString("base64")}`,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: new URLSearchParams({ grant_type: "client_credentials", scope: "events:read", audience: AUDIENCE }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { access_token: string }).access_token;
    };

    const milestone = async (awb: string, state: string, station = "FRA") => {
      const res = await postJson(`${a.url}/carrier/handling/shipment/events`, { awb, state, station }, admin);
      expect(res.status).toBe(202);
    };
    const fsu = async (text: string) => {
      const res = await fetch(`${a.url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: { ...admin, "content-type": "text/plain" },
        body: text,
      });
      expect(res.status).toBe(202);
    };
    const shipmentOf = (awb: string) => `${a.base}/logistics-objects/shipment-${awb}`;

    const subscription = (topic: string, more: Body = {}) => ({
      "@context": CONTEXT,
      "@type": "api:Subscription",
      "api:hasSubscriber": { "@id": b.organization },
      "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
      "api:hasTopic": { "@type": XSD_ANY_URI, "@value": topic },
      "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
      ...more,
    });
    /** B subscribes at A through POST /subscriptions with its own token: answers the SubscriptionRequest's URI. */
    const subscribe = async (topic: string, more: Body = {}): Promise<string> => {
      const res = await oneRecord(`${a.base}/subscriptions`, {
        method: "POST",
        token: await tokenOf(b),
        body: subscription(topic, more),
      });
      expect(res.status).toBe(201);
      expect(res.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${a.base}/action-requests/[0-9a-f-]{36}$`));
      return location;
    };

    /** What B stored from its POST /notifications, oldest first. */
    const storedAtB = async (): Promise<Stored[]> =>
      (await b.app.database.prisma.oneRecordNotificationReceived.findMany({ orderBy: { receivedAt: "asc" } })).map(
        (row) => {
          const body = row.body as Body;
          return {
            notificationId: row.notificationId,
            eventType: row.eventType,
            object: row.logisticsObject ?? undefined,
            event: idOf(body, "hasLogisticsEvent"),
            triggeredBy: idOf(body, "isTriggeredBy"),
            body,
            sender: row.sender,
          };
        },
      );
    const arrivedAtB = async (wanted: (n: Stored) => boolean, count: number, what: string): Promise<Stored[]> => {
      let found: Stored[] = [];
      await until(async () => (found = (await storedAtB()).filter(wanted)).length >= count, {
        timeoutMs: 30_000,
        what,
      });
      return found;
    };
    /** Until A's outbox has nothing left to try: every notification A queued was delivered (or ended). */
    const drainedAtA = () =>
      until(async () => (await a.app.database.prisma.delivery.count({ where: { status: "PENDING" } })) === 0, {
        timeoutMs: 30_000,
        what: "A's outbox drained",
      });
    /** A's ONE Record deliveries of one SubscriptionRequest. */
    const deliveriesOf = (request: string) =>
      a.app.database.prisma.delivery.findMany({
        where: { kind: "ONE_RECORD", oneRecordSubscriptionId: request.slice(request.lastIndexOf("/") + 1) },
      });

    it("subscriber-initiated: B subscribes at A, A's milestones from every input arrive at B once each, revocation stops them", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const shipment = shipmentOf(awb);
      const token = await tokenOf(b);
      const request = await subscribe(shipment, { "api:notifyRequestStatusChange": true });

      // B reads its SubscriptionRequest at A: accepted, B's own Organization the subscriber.
      const read = await oneRecord(request, { token });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        "@id": request,
        "@type": "api:SubscriptionRequest",
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:isRequestedBy": { "@id": b.organization },
        "api:hasSubscription": { "api:hasSubscriber": { "@id": b.organization } },
      });
      const [accepted] = await arrivedAtB(
        (n) => n.eventType === "SUBSCRIPTION_REQUEST_ACCEPTED" && n.triggeredBy === request,
        1,
        "SUBSCRIPTION_REQUEST_ACCEPTED at B",
      );
      // B authenticated A's notifications as A's carrier Organization (A's token client, the shared issuer).
      expect(accepted!.sender).toBe(a.organization);

      // Milestones into A three ways: legacy JSON, a ONE Record POST of an event, a Cargo-IMP FSU.
      await milestone(awb, "DEP");
      const posted = await oneRecord(`${shipment}/logistics-events`, {
        token: ADMIN_KEY,
        body: {
          "@context": CONTEXT,
          "@type": "cargo:StatusUpdateEvent",
          "cargo:eventCode": { "@id": `${STATUS}ARR` },
          "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-10-16T18:00:00Z" },
          "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
          "cargo:eventLocation": { "@id": `${a.base}/logistics-objects/location-JFK` },
        },
      });
      expect(posted.status).toBe(201);
      await fsu(`FSU/14\n${awb}FRAJFK/T1K10\nRCF/LH400/16OCT/JFK/T1K10\n`);

      const isEvent = (n: Stored) => n.eventType === "LOGISTICS_EVENT_RECEIVED" && n.triggeredBy === request;
      const events = await arrivedAtB(isEvent, 3, "three LOGISTICS_EVENT_RECEIVED at B");
      await drainedAtA();
      const sent = await deliveriesOf(request);
      expect(sent.map((d) => d.status)).toEqual(["DELIVERED", "DELIVERED", "DELIVERED"]);
      const milestones = await a.app.database.prisma.statusEvent.findMany({ where: { awb }, orderBy: { seq: "asc" } });
      expect(milestones.map((m) => m.state)).toEqual(["RCS", "DEP", "ARR", "RCF"]);
      // Once each: B stored exactly A's three notifications, by their Notification-Ids, one per milestone after the subscription.
      expect((await storedAtB()).filter(isEvent)).toHaveLength(3);
      expect(new Set(events.map((n) => n.notificationId))).toEqual(new Set(sent.map((d) => d.id)));
      expect(new Set(events.map((n) => n.event))).toEqual(
        new Set(milestones.slice(1).map((m) => `${shipment}/logistics-events/${m.id}`)),
      );
      for (const delivery of sent) await assertConforms(JSON.parse(delivery.payload) as object);
      for (const n of events) {
        expect(n.object).toBe(shipment);
        await assertConforms(n.body);
      }
      // Each event B was told of resolves at A with B's token; their creation dates give the milestones' order.
      const read3 = await Promise.all(events.map((n) => oneRecord(n.event!, { token })));
      expect(read3.map((r) => r.status)).toEqual([200, 200, 200]);
      const byCreation = [...read3].sort((x, y) =>
        String(x.body["cargo:creationDate"]["@value"]).localeCompare(String(y.body["cargo:creationDate"]["@value"])),
      );
      expect(byCreation.map((r) => r.body["cargo:eventCode"]["@id"])).toEqual([
        `${STATUS}DEP`,
        `${STATUS}ARR`,
        `${STATUS}RCF`,
      ]);

      // A's operator sends one of them again: the same Notification-Id, so B still holds it once.
      const again = await graphql(
        a.url,
        "mutation($id: ID!) { redeliverOneRecordDelivery(deliveryId: $id) { deliveryId status } }",
        { id: sent[0]!.id },
        admin,
      );
      expect(again.errors).toBeUndefined();
      await until(
        async () =>
          (await a.app.database.prisma.deliveryAttempt.count({ where: { deliveryId: sent[0]!.id } })) === 2 &&
          (await a.app.database.prisma.delivery.findUniqueOrThrow({ where: { id: sent[0]!.id } })).status ===
            "DELIVERED",
        { what: "the redelivery recorded" },
      );
      expect((await storedAtB()).filter(isEvent)).toHaveLength(3);

      // B revokes: A answers 204, B is told so, and a later milestone is queued for no one.
      const revoked = await oneRecord(request, { method: "DELETE", token });
      expect(revoked.status).toBe(204);
      await arrivedAtB(
        (n) => n.eventType === "SUBSCRIPTION_REQUEST_REVOKED" && n.triggeredBy === request,
        1,
        "SUBSCRIPTION_REQUEST_REVOKED at B",
      );
      await milestone(awb, "DLV", "JFK");
      expect(await deliveriesOf(request)).toHaveLength(3);
      await drainedAtA();
      expect((await storedAtB()).filter(isEvent)).toHaveLength(3);
      expect((await oneRecord(request, { token })).body["api:hasRequestStatus"]).toEqual({
        "@id": "api:REQUEST_REVOKED",
      });
    }, 90_000);

    it("subscriber-initiated: a subscription past its expiresAt is told nothing more", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const expiresAt = new Date(Date.now() + 3_000);
      const request = await subscribe(shipmentOf(awb), {
        "api:expiresAt": { "@type": "xsd:dateTime", "@value": expiresAt.toISOString() },
      });
      await milestone(awb, "DEP");
      const isEvent = (n: Stored) => n.eventType === "LOGISTICS_EVENT_RECEIVED" && n.triggeredBy === request;
      await arrivedAtB(isEvent, 1, "the DEP before expiry");
      await until(() => Date.now() > expiresAt.getTime() + 100, { what: "the subscription's expiry" });
      await milestone(awb, "ARR", "JFK");
      await drainedAtA();
      expect(await deliveriesOf(request)).toHaveLength(1);
      expect((await storedAtB()).filter(isEvent)).toHaveLength(1);
    }, 60_000);

    it("a legacy webhook subscription and B's ONE Record subscription on one AWB each get each milestone exactly once", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const legacy = await postJson(
        `${a.url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${webhooks.url}/ok/both/${awb}`, states: "*" },
        { authorization: `Bearer ${follower.key}` },
      );
      expect(legacy.status).toBe(201);
      const request = await subscribe(shipmentOf(awb));
      for (const state of ["MAN", "DEP", "ARR"]) await milestone(awb, state);

      const isEvent = (n: Stored) => n.eventType === "LOGISTICS_EVENT_RECEIVED" && n.triggeredBy === request;
      await arrivedAtB(isEvent, 3, "three notifications at B");
      const hooks = () => webhooks.posts.filter((post) => post.path === `/ok/both/${awb}`);
      await until(() => hooks().length >= 3, { what: "three webhooks" });
      await drainedAtA();

      const milestones = await a.app.database.prisma.statusEvent.findMany({
        where: { awb, state: { in: ["MAN", "DEP", "ARR"] } },
      });
      const hooked = hooks().map((post) => JSON.parse(post.body) as Body);
      expect(hooked.map((body) => body.State).sort()).toEqual(["ARR", "DEP", "MAN"]);
      expect(new Set(hooks().map((post) => post.headers["webhook-id"])).size).toBe(3);
      const told = (await storedAtB()).filter(isEvent);
      expect(told).toHaveLength(3);
      expect(new Set(told.map((n) => n.event))).toEqual(
        new Set(milestones.map((m) => `${shipmentOf(awb)}/logistics-events/${m.id}`)),
      );
    }, 60_000);

    it("publisher-initiated: A proposes to its partner B, records what B's GET /subscriptions answers, and B gets A's milestones; new AWBs are announced", async () => {
      // B's operator wants A's objects' events (any of A's objects: a URI prefix).
      await createSubscriptionWishes(b.app.database.prisma).want({
        topicType: "LOGISTICS_OBJECT_IDENTIFIER",
        topic: `${a.base}/logistics-objects/`,
        events: ["LOGISTICS_EVENT_RECEIVED"],
      });
      // The follower (B's account at A) follows an AWB the legacy way.
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const legacy = await postJson(
        `${a.url}/carrier/handling/shipment/subscribe`,
        { awb, callback: `${webhooks.url}/ok/follower/${awb}`, states: "*" },
        { authorization: `Bearer ${follower.key}` },
      );
      expect(legacy.status).toBe(201);
      // A's operator registers B's server as the follower's, to be proposed subscriptions and told of new AWBs.
      await createPartnerAdmin(a.app.database.prisma, undefined).add({
        serverUrl: b.base,
        clientId: follower.clientId,
        proposeSubscriptions: true,
        announceObjects: true,
      });

      // A's proposal loop asks B and records B's answer as an accepted, publisher-initiated SubscriptionRequest.
      const published = () =>
        a.app.database.prisma.oneRecordSubscription.findMany({
          where: { initiatedBy: "PUBLISHER", topic: `shipment-${awb}` },
        });
      await until(async () => (await published()).length === 1, {
        timeoutMs: 45_000,
        what: "A's proposal answered by B",
      });
      const [recorded] = await published();
      expect(recorded).toMatchObject({
        status: "REQUEST_ACCEPTED",
        topicType: "LOGISTICS_OBJECT_IDENTIFIER",
        eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
        endpoint: `${b.base}/notifications`,
      });
      // What B answered is kept as B wrote it (B's carrier Organization subscribes); A's SubscriptionRequest
      // names the subscriber as A knows it: the partner's Organization at A, which may read and revoke it.
      expect(recorded!.subscription).toMatchObject({ [`${API}hasSubscriber`]: [{ "@id": b.organization }] });
      const request = `${a.base}/action-requests/${recorded!.id}`;
      const read = await oneRecord(request, { token: follower.key });
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        "@type": "api:SubscriptionRequest",
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:hasSubscription": {
          "api:hasSubscriber": { "@id": `${a.base}/logistics-objects/organization-${follower.clientId}` },
        },
      });

      await milestone(awb, "DEP");
      const [told] = await arrivedAtB(
        (n) => n.eventType === "LOGISTICS_EVENT_RECEIVED" && n.triggeredBy === request,
        1,
        "A's DEP at B through the proposed subscription",
      );
      expect(told!.object).toBe(shipmentOf(awb));
      await assertConforms(told!.body);
      const [dep] = await a.app.database.prisma.statusEvent.findMany({ where: { awb, state: "DEP" } });
      expect(told!.event).toBe(`${shipmentOf(awb)}/logistics-events/${dep!.id}`);

      // A new AWB at A: its Waybill and Shipment are announced to B (LOGISTICS_OBJECT_AVAILABLE).
      const fresh = nextAwb();
      await milestone(fresh, "RCS");
      const announced = await arrivedAtB(
        (n) => n.eventType === "LOGISTICS_OBJECT_AVAILABLE" && (n.object ?? "").endsWith(fresh),
        2,
        "both of the new AWB's objects announced at B",
      );
      expect(announced.map((n) => n.object).sort()).toEqual([
        shipmentOf(fresh),
        `${a.base}/logistics-objects/waybill-${fresh}`,
      ]);
      for (const n of announced) {
        expect(n.triggeredBy).toBeUndefined();
        await assertConforms(n.body);
      }

      // B, calling A with its own identity, reads the SubscriptionRequest A recorded for it and revokes
      // it (the specification: the subscriber may retrieve its status and revoke it); a third party may not.
      const token = await tokenOf(b);
      const stranger = await issuer.token({
        logistics_agent_uri: "https://1r.elsewhere.example/logistics-objects/someone",
        aud: AUDIENCE,
        scope: "events:read",
      });
      expect((await oneRecord(request, { token: stranger })).status).toBe(403);
      const own = await oneRecord(request, { token });
      expect([own.status, own.body["api:hasRequestStatus"]]).toEqual([200, { "@id": "api:REQUEST_ACCEPTED" }]);
      expect((await oneRecord(request, { method: "DELETE", token: stranger })).status).toBe(403);
      expect((await oneRecord(request, { method: "DELETE", token })).status).toBe(204);
      await milestone(awb, "ARR", "JFK");
      expect(await deliveriesOf(request)).toHaveLength(1);
    }, 90_000);

    it("access delegation: A's object creator delegates reading to B, whose agent then reads the object and its events and is told of new ones", async () => {
      const created = await a.app.services.clients.createClient({ name: "creator", callbackPrefixes: ["*"] });
      const creator = (await a.app.services.clients.issueKey(created.clientId, ["objects:write", "events:write"])).key;
      const piece = await oneRecord(`${a.base}/logistics-objects`, {
        token: creator,
        body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "MACHINE PARTS" },
      });
      expect(piece.status).toBe(201);
      const uri = piece.headers.get("location")!;
      const event = (code: string) => ({
        "@context": CONTEXT,
        "@type": "cargo:LogisticsEvent",
        "cargo:eventName": code,
        "cargo:eventDate": { "@type": "xsd:dateTime", "@value": "2026-11-20T08:00:00Z" },
      });
      expect((await oneRecord(`${uri}/logistics-events`, { token: creator, body: event("packed") })).status).toBe(201);

      const token = await tokenOf(b);
      const reads = async () =>
        Promise.all([uri, `${uri}/logistics-events`].map(async (url) => (await oneRecord(url, { token })).status));
      expect(await reads()).toEqual([403, 403]);

      const delegated = await oneRecord(`${a.base}/access-delegations`, {
        token: creator,
        body: {
          "@context": CONTEXT,
          "@type": "api:AccessDelegation",
          "api:hasDescription": "The carrier B flies the piece on",
          "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
          "api:isRequestedFor": [{ "@id": b.organization }],
          "api:hasLogisticsObject": [{ "@id": uri }],
          "api:notifyRequestStatusChange": false,
        },
      });
      expect(delegated.status).toBe(201);
      const delegation = delegated.headers.get("location")!;
      expect((await oneRecord(delegation, { token: creator })).body["api:hasRequestStatus"]).toEqual({
        "@id": "api:REQUEST_ACCEPTED",
      });

      // B's agent reads what it was granted: the object and its events.
      expect(await reads()).toEqual([200, 200]);
      const object = await oneRecord(uri, { token });
      expect(object.body["cargo:goodsDescription"]).toBe("MACHINE PARTS");
      const events = await oneRecord(`${uri}/logistics-events`, { token });
      expect(events.body["api:hasTotalItems"]).toBe(1);

      // The grant opens notifications too: B subscribes to the piece and is told of its next event.
      const request = await subscribe(uri);
      expect((await oneRecord(request, { token })).body["api:hasRequestStatus"]).toEqual({
        "@id": "api:REQUEST_ACCEPTED",
      });
      expect((await oneRecord(`${uri}/logistics-events`, { token: creator, body: event("loaded") })).status).toBe(201);
      const [told] = await arrivedAtB(
        (n) => n.eventType === "LOGISTICS_EVENT_RECEIVED" && n.triggeredBy === request,
        1,
        "the piece's event at B",
      );
      expect(told!.object).toBe(uri);
      const loaded = await oneRecord(told!.event!, { token });
      expect([loaded.status, loaded.body["cargo:eventName"]]).toEqual([200, "loaded"]);

      // The creator revokes the delegation: B reads nothing of the piece any more.
      expect((await oneRecord(delegation, { method: "DELETE", token: creator })).status).toBe(204);
      expect(await reads()).toEqual([403, 403]);
    }, 60_000);
  });
});
