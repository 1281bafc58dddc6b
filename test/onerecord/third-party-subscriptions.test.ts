import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../../src/app";
import type { Scope } from "../../src/clients/credentials";
import {
  MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS,
  MAX_PENDING_SUBSCRIPTION_REQUESTS,
} from "../../src/onerecord/subscriptions/subscriptions.service";
import { expirePending } from "../../src/retention/sql/expire-pending.sql";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { startOidcIssuer } from "../support/oidc-issuer";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";
import { type ReceivedPost, startReceiver } from "../support/receiver";
import { API, awbSequence, CARGO, CONTEXT, TYPE_CLASSES } from "../support/onerecord-vocabulary";

/** A fresh AWB with a valid check digit. */
const nextAwb = awbSequence(5_300_000);

/**
 * Subscriptions for a third party (docs/ONE-RECORD.md "Subscriptions for a third party"): the
 * specification's flow over the running gateway — subscribe naming another Organization, read the
 * request, the holder accepts it, the notification reaches a real receiver standing in for the
 * subscriber's server, revoke — and what narrows it.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record subscriptions for a third party on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    /** The holder of the objects (it creates them, posts their events and decides). */
    let holder: string;
    /** A forwarder's system: it subscribes on behalf of its customers. */
    const forwarder = { key: "", organization: "" };
    let serial = 0;
    let eventSerial = 0;

    const newClient = async (name: string, scopes: Scope[]) => {
      const { clientId } = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
      return {
        key: (await app.services.clients.issueKey(clientId, scopes)).key,
        organization: `${base}/logistics-objects/organization-${clientId}`,
      };
    };

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      // The gateway sends tokens to registered partners: none may go to a server no operator registered.
      const issuer = await startOidcIssuer(disposers);
      issuer.addClient("carrier", "carrier-secret");
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_TOKEN_URL: issuer.tokenUrl,
        ONE_RECORD_CLIENT_ID: "carrier",
        ONE_RECORD_CLIENT_SECRET: "carrier-secret",
      }));
      base = `${app.url()}/onerecord`;
      holder = (await newClient("holder", ["objects:write", "events:write"])).key;
      Object.assign(forwarder, await newClient("forwarder", ["events:read"]));
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    /** An Organization on another ONE Record server: the receiver, under a path of its own. */
    const foreignOrganization = () => {
      const server = `${receiver.url}/ok/server-${++serial}`;
      return { iri: `${server}/logistics-objects/organization-customer`, endpoint: `${server}/notifications` };
    };
    const createObject = async (type: string, fields: Record<string, unknown> = {}) => {
      const res = await oneRecord(`${base}/logistics-objects`, {
        token: holder,
        body: { "@context": CONTEXT, "@type": type, ...fields },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };
    const subscription = (topic: string, subscriber: string, fields: Record<string, unknown> = {}) => ({
      "@context": CONTEXT,
      "@type": "api:Subscription",
      "api:hasSubscriber": { "@id": subscriber },
      "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
      "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
      "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": topic },
      ...fields,
    });
    const subscribe = (body: unknown, token = forwarder.key) =>
      oneRecord(`${base}/subscriptions`, { method: "POST", body, token });
    const requested = (res: OneRecordAnswer) => {
      expect([res.status, res.text]).toEqual([201, ""]);
      expect(res.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${base}/action-requests/[0-9a-f-]{36}$`));
      return location;
    };
    const decide = (request: string, status: string, token = holder) =>
      oneRecord(`${request}?status=${status}`, { method: "PATCH", token });
    const statusOf = async (request: string, token = forwarder.key) => {
      const res = await oneRecord(request, { token });
      expect(res.status).toBe(200);
      return res.body["api:hasRequestStatus"]["@id"] as string;
    };
    const deliveriesOf = (request: string) =>
      app.database.prisma.delivery.findMany({ where: { oneRecordSubscriptionId: request.split("/").pop()! } });
    /** The notifications of events queued under the subscription (its status notifications apart). */
    const eventNotificationsOf = async (request: string) =>
      (await deliveriesOf(request)).filter((d) => d.payload.includes("LOGISTICS_EVENT_RECEIVED"));
    const postEvent = async (object: string) => {
      const res = await oneRecord(`${object}/logistics-events`, {
        token: holder,
        body: {
          "@context": CONTEXT,
          "@type": "cargo:LogisticsEvent",
          // A new time each: the same event posted again is the same event (its id is derived from it).
          "cargo:eventDate": {
            "@type": "http://www.w3.org/2001/XMLSchema#dateTime",
            "@value": new Date(Date.UTC(2026, 11, 5, 10, 0, ++eventSerial)).toISOString(),
          },
        },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };
    const delegate = async (object: string, organization: string) => {
      const res = await oneRecord(`${base}/access-delegations`, {
        token: holder,
        body: {
          "@context": CONTEXT,
          "@type": "api:AccessDelegation",
          "api:hasPermission": [{ "@id": "api:GET_LOGISTICS_OBJECT" }, { "@id": "api:GET_LOGISTICS_EVENT" }],
          "api:isRequestedFor": [{ "@id": organization }],
          "api:notifyRequestStatusChange": false,
          "api:hasLogisticsObject": [{ "@id": object }],
        },
      });
      expect(res.status).toBe(201);
    };
    /** The first POST to `path` whose body satisfies `matches`, waited for. */
    const received = (path: string, matches: (body: any) => boolean): Promise<ReceivedPost> =>
      new Promise((resolve) => {
        const fits = (post: ReceivedPost) => post.path === path && matches(JSON.parse(post.body));
        const already = receiver.posts.find(fits);
        if (already) return resolve(already);
        receiver.onPost((post) => {
          if (fits(post)) resolve(post);
        });
      });
    const eventType = (name: string) => (body: any) => body["api:hasEventType"]?.["@id"] === `api:${name}`;

    it("an Organization on another server: pending until the holder accepts, then notified at the endpoint its IRI names, without a token; revoked by the requester", async () => {
      const piece = await createObject("cargo:Piece", { "cargo:goodsDescription": "MACHINE PARTS" });
      const customer = foreignOrganization();
      const request = requested(
        await subscribe(subscription(piece, customer.iri, { "api:notifyRequestStatusChange": true })),
      );

      const read = await oneRecord(request, { token: forwarder.key });
      expect(read.status).toBe(200);
      expect(read.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      expect(read.headers.get("last-modified")).not.toBeNull();
      expect(read.body).toMatchObject({
        "@id": request,
        "@type": "api:SubscriptionRequest",
        "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" },
        "api:isRequestedBy": { "@id": forwarder.organization },
        "api:isRequestedAt": expect.anything(),
        "api:hasSubscription": {
          "api:hasSubscriber": { "@id": customer.iri },
          "api:hasTopic": piece,
        },
      });
      // Pending: an event notifies nobody yet; the requester does not decide; the holder does.
      await postEvent(piece);
      expect(await eventNotificationsOf(request)).toEqual([]);
      expect((await decide(request, "REQUEST_ACCEPTED", forwarder.key)).status).toBe(403);
      const accepted = await decide(request, "REQUEST_ACCEPTED");
      expect([accepted.status, accepted.text]).toEqual([204, ""]);
      expect(accepted.headers.get("location")).toBe(request);
      expect(accepted.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      const again = await decide(request, "REQUEST_REJECTED");
      expect(again.status).toBe(422);
      expect(again.text).toContain("ACTION_REQUEST_DECIDED");
      const afterDecision = (await oneRecord(request, { token: forwarder.key })).body;
      expect(afterDecision).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:hasRequestStatusHistory": {
          "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" },
          "api:isChangedBy": { "@id": forwarder.organization },
        },
      });
      // Told under the subscription it tells of: it goes only while that is live, and ends with it.
      const [told] = await app.database.prisma.delivery.findMany({ where: { callback: customer.endpoint } });
      expect(told).toMatchObject({ oneRecordSubscriptionId: request.split("/").pop() });
      const acceptedNotice = await received(
        new URL(customer.endpoint).pathname,
        eventType("SUBSCRIPTION_REQUEST_ACCEPTED"),
      );
      expect(acceptedNotice.headers.authorization).toBeUndefined();

      // Accepted, it notifies what its subscriber may read: nothing until the holder delegates access.
      await postEvent(piece);
      expect(await eventNotificationsOf(request)).toEqual([]);
      await delegate(piece, customer.iri);
      const event = await postEvent(piece);
      const notice = await received(
        new URL(customer.endpoint).pathname,
        (body) => eventType("LOGISTICS_EVENT_RECEIVED")(body) && body["api:hasLogisticsEvent"]?.["@id"] === event,
      );
      expect(notice.headers.authorization).toBeUndefined();
      expect(notice.headers["content-type"]).toContain("application/ld+json");
      expect(JSON.parse(notice.body)).toMatchObject({
        "api:isTriggeredBy": { "@id": request },
        "api:hasLogisticsObject": { "@id": piece },
      });

      const revoked = await oneRecord(request, { method: "DELETE", token: forwarder.key });
      expect(revoked.status).toBe(204);
      expect(await statusOf(request)).toBe("api:REQUEST_REVOKED");
    });

    it("an Organization logistics object here: its notifications are held until the operator registers its server, then delivered there", async () => {
      const company = await createObject("cargo:Company", { "cargo:name": "Customer Logistics GmbH" });
      const piece = await createObject("cargo:Piece", { "cargo:goodsDescription": "SPARE PARTS" });
      const request = requested(
        await subscribe(subscription(piece, company, { "api:notifyRequestStatusChange": true })),
      );
      expect((await decide(request, "REQUEST_ACCEPTED")).status).toBe(204);
      await delegate(piece, company);
      const event = await postEvent(piece);
      // Queued, parked: no server to send it to yet.
      const [held] = await deliveriesOf(request);
      expect(held).toMatchObject({ status: "PARKED", attemptCount: 0 });
      expect(held!.callback).toMatch(/^urn:cargo-gateway:held:/);

      // Retention keeps what is held, the acceptance told under no subscription too: registering the
      // server releases it.
      const heldOnes = () =>
        app.database.prisma.delivery.findMany({ where: { callback: held!.callback }, orderBy: { createdAt: "asc" } });
      expect((await heldOnes()).map((d) => [d.status, d.oneRecordSubscriptionId])).toEqual([
        ["PARKED", null],
        ["PARKED", held!.oneRecordSubscriptionId],
      ]);
      await expirePending.affectedRows(app.database.prisma, { limit: 1_000, disabledBefore: null });
      expect((await heldOnes()).map((d) => d.status)).toEqual(["PARKED", "PARKED"]);
      const server = `${receiver.url}/ok/company-server`;
      await app.services.oneRecordPartners.add({ serverUrl: server, agentUri: company });
      const notice = await received(
        "/ok/company-server/notifications",
        (body) => body["api:hasLogisticsEvent"]?.["@id"] === event,
      );
      expect(JSON.parse(notice.body)).toMatchObject({ "api:isTriggeredBy": { "@id": request } });
      expect(notice.headers.authorization).toMatch(/^Bearer /); // a registered partner's server
      await received("/ok/company-server/notifications", eventType("SUBSCRIPTION_REQUEST_ACCEPTED"));
      expect((await deliveriesOf(request))[0]).toMatchObject({ callback: `${server}/notifications` });
    });

    it("the specification's Subscription_example1.json (its subscriber another server's Organization) waits for the holder; rejected, it reads with its reason and is not revocable", async () => {
      const piece = await createObject("cargo:Piece");
      const example = JSON.parse(readFileSync(path.join(__dirname, "examples", "Subscription_example1.json"), "utf8"));
      example["api:hasTopic"]["@value"] = piece;
      example["api:notifyRequestStatusChange"] = true;
      const request = requested(await subscribe(example));
      expect(await statusOf(request)).toBe("api:REQUEST_PENDING");
      // Its server, derived from the IRI, is no registered partner's: it is told of no rejection.
      const toItsServer = () =>
        app.database.prisma.delivery.count({ where: { callback: "https://1r.example.com/notifications" } });
      expect((await decide(request, "REQUEST_REJECTED")).status).toBe(204);
      const body = (await oneRecord(request, { token: forwarder.key })).body;
      expect(body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_REJECTED" },
        "api:hasError": { "api:hasErrorDetail": { "api:hasMessage": expect.stringContaining("rejected") } },
      });
      expect((await oneRecord(request, { method: "DELETE", token: forwarder.key })).status).toBe(422);
      expect(await toItsServer()).toBe(0);
      // Nor of a revocation: the requester may withdraw pending requests as often as it likes.
      const withdrawn = requested(await subscribe(example));
      expect((await oneRecord(withdrawn, { method: "DELETE", token: forwarder.key })).status).toBe(204);
      expect(await toItsServer()).toBe(0);
    });

    it("refuses, storing nothing, a subscriber of this server that is no Organization, and one no server can be derived for", async () => {
      const piece = await createObject("cargo:Piece");
      const before = await app.database.prisma.oneRecordSubscription.count();
      const notOrganization = await subscribe(subscription(piece, await createObject("cargo:Piece")));
      expect(notOrganization.status).toBe(422);
      expect(notOrganization.text).toContain("is no Organization");
      const noServer = await subscribe(subscription(piece, "urn:example:organization:customer"));
      expect(noServer.status).toBe(422);
      expect(noServer.text).toContain("http(s)");
      const noClient = await subscribe(
        subscription(piece, `${base}/logistics-objects/organization-00000000-0000-4000-8000-000000000000`),
      );
      expect(noClient.status).toBe(422);
      expect(noClient.text).toContain("is no Organization");
      // Notifications are never sent to an address the outbound policy refuses (cloud metadata here).
      const metadata = await subscribe(subscription(piece, "http://169.254.169.254/logistics-objects/organization-x"));
      expect(metadata.status).toBe(422);
      expect(metadata.text).toContain("169.254.169.254");
      // Nor at a path a requester chose on a registered partner's server, which would get its tokens.
      const hub = `${receiver.url}/ok/hub`;
      await app.services.oneRecordPartners.add({ serverUrl: hub, agentUri: `${hub}/logistics-objects/organization-p` });
      const underHub = await subscribe(subscription(piece, `${hub}/tenant-b/logistics-objects/organization-b`));
      expect(underHub.status).toBe(422);
      expect(underHub.text).toContain("registered for another Organization");
      expect(await app.database.prisma.oneRecordSubscription.count()).toBe(before);
    });

    /** A client the operator registered no server for, with a key reading AWBs. */
    const clientOrganization = async (name: string) => {
      const { clientId } = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
      const key = (await app.services.clients.issueKey(clientId, ["events:read"])).key;
      return { clientId, key, organization: `${base}/logistics-objects/organization-${clientId}` };
    };
    const typeSubscription = (cls: string, subscriber: string) => ({
      "@context": CONTEXT,
      "@type": "api:Subscription",
      "api:hasSubscriber": { "@id": subscriber },
      "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_TYPE" },
      "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
      "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": `${CARGO}${cls}` },
    });

    it("a milestone's notification to an Organization no server is registered for waits parked, never handed to a sender; registering the server delivers it", async () => {
      const customer = await clientOrganization("customer without a server");
      const request = requested(await subscribe(typeSubscription("Shipment", customer.organization)));
      expect((await decide(request, "REQUEST_ACCEPTED", ADMIN_KEY)).status).toBe(204);
      const awb = nextAwb();
      const ingested = await postJson(
        `${app.url()}/carrier/handling/shipment/events`,
        { awb, state: "RCS", station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(ingested.status).toBe(202);
      // Queued with the ingestion's commit: parked, and not leased to this process's worker.
      const [held] = await eventNotificationsOf(request);
      expect(held).toMatchObject({ status: "PARKED", attemptCount: 0, leaseToken: null, leaseUntil: null });
      expect(held!.callback).toMatch(/^urn:cargo-gateway:held:/);
      await app.services.oneRecordPartners.add({
        serverUrl: `${receiver.url}/ok/customer`,
        clientId: customer.clientId,
      });
      const notice = await received("/ok/customer/notifications", eventType("LOGISTICS_EVENT_RECEIVED"));
      expect(JSON.parse(notice.body)).toMatchObject({ "api:isTriggeredBy": { "@id": request } });
    });

    it("others' subscriptions on an Organization's behalf leave it the room for its own", async () => {
      const customer = await clientOrganization("customer with its own subscriptions");
      await app.services.oneRecordPartners.add({ serverUrl: `${receiver.url}/ok/own`, clientId: customer.clientId });
      for (const cls of TYPE_CLASSES.slice(0, MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS)) {
        const request = requested(await subscribe(typeSubscription(cls, customer.organization)));
        expect((await decide(request, "REQUEST_ACCEPTED", ADMIN_KEY)).status).toBe(204);
      }
      const own = await subscribe(
        typeSubscription(TYPE_CLASSES[MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS]!, customer.organization),
        customer.key,
      );
      expect(own.status).toBe(201);
      expect(await statusOf(own.headers.get("location")!, customer.key)).toBe("api:REQUEST_ACCEPTED");
    });

    it("refuses to accept a request whose derived endpoint has since come to lie on a registered partner's server (422), its tokens its own", async () => {
      const hub = `${receiver.url}/ok/later-hub`;
      const request = requested(
        await subscribe(typeSubscription("Shipment", `${hub}/tenant-b/logistics-objects/organization-b`)),
      );
      await app.services.oneRecordPartners.add({ serverUrl: hub, agentUri: `${hub}/logistics-objects/organization-p` });
      const decided = await decide(request, "REQUEST_ACCEPTED", ADMIN_KEY);
      expect(decided.status).toBe(422);
      expect(decided.text).toContain("registered for another Organization");
      expect(await statusOf(request)).toBe("api:REQUEST_PENDING");
    });

    it(`keeps at most ${MAX_PENDING_SUBSCRIPTION_REQUESTS} requests of one requester waiting, however many arrive at once (429 beyond, nothing stored)`, async () => {
      const requester = await newClient("busy requester", ["events:read"]);
      const piece = await createObject("cargo:Piece");
      const answers = await Promise.all(
        Array.from({ length: MAX_PENDING_SUBSCRIPTION_REQUESTS + 8 }, () =>
          subscribe(subscription(piece, foreignOrganization().iri), requester.key),
        ),
      );
      const statuses = answers.map((a) => a.status);
      expect(statuses.filter((s) => s === 201)).toHaveLength(MAX_PENDING_SUBSCRIPTION_REQUESTS);
      expect(statuses.filter((s) => s === 429)).toHaveLength(8);
      const organization = requester.organization.split("/").pop()!;
      expect(
        await app.database.prisma.oneRecordSubscription.count({
          where: { requestedBy: organization, status: "REQUEST_PENDING" },
        }),
      ).toBe(MAX_PENDING_SUBSCRIPTION_REQUESTS);
      // A decision frees a place.
      const first = answers.find((a) => a.status === 201)!.headers.get("location")!;
      expect((await decide(first, "REQUEST_REJECTED")).status).toBe(204);
      expect((await subscribe(subscription(piece, foreignOrganization().iri), requester.key)).status).toBe(201);
    });
  });
});

describe.each(BEHAVIOUR_BACKENDS)("ONE_RECORD_THIRD_PARTY_SUBSCRIBERS on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll());

    it.each([
      ["none", [422, 422]],
      ["registered", [201, 422]],
    ])("=%s: a registered partner's Organization, then another server's", async (setting, expected) => {
      const { app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_THIRD_PARTY_SUBSCRIBERS: setting,
      });
      const base = `${app.url()}/onerecord`;
      const { clientId } = await app.services.clients.createClient({ name: "forwarder", callbackPrefixes: ["*"] });
      const key = (await app.services.clients.issueKey(clientId, ["events:read"])).key;
      const piece = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: { "@context": CONTEXT, "@type": "cargo:Piece" },
      });
      const registered = "https://1r.registered.example/logistics-objects/organization-registered";
      await app.services.oneRecordPartners.add({ serverUrl: "https://1r.registered.example", agentUri: registered });
      const body = (subscriber: string) => ({
        "@context": CONTEXT,
        "@type": "api:Subscription",
        "api:hasSubscriber": { "@id": subscriber },
        "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
        "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
        "api:hasTopic": { "@value": piece.headers.get("location") },
      });
      const answers = [];
      for (const subscriber of [registered, "https://1r.other.example/logistics-objects/organization-other"]) {
        const res = await oneRecord(`${base}/subscriptions`, { method: "POST", body: body(subscriber), token: key });
        answers.push(res.status);
        if (res.status === 422) expect(res.text).toContain(`ONE_RECORD_THIRD_PARTY_SUBSCRIBERS=${setting}`);
      }
      expect(answers).toEqual(expected);
    });
  });
});
