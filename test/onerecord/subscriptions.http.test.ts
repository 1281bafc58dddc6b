import type { App } from "../../src/app";
import { createOperatorGrants } from "../../src/onerecord/identity/operator-grants";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS } from "../../src/onerecord/subscriptions/subscriptions.service";
import { XSD } from "../../src/onerecord/jsonld-context";
import { canonicalLiteral } from "../../src/onerecord/xsd-canonical";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { assertConforms } from "../support/onerecord-conformance";
import { type OneRecordAnswer, oneRecord } from "../support/onerecord-requests";
import { startReceiver } from "../support/receiver";
import { API, awbSequence, CARGO, CONTEXT, TYPE_CLASSES } from "../support/onerecord-vocabulary";

/** A fresh AWB with a valid check digit. */
const nextAwb = awbSequence(4_200_000);

/** POST /subscriptions, GET / PATCH / DELETE its SubscriptionRequest, on both databases (docs/ONE-RECORD.md "Subscriptions"). */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record subscriptions on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let partnerServer: string;
    /** A forwarder registered as a partner, reading AWBs (events:read). */
    const subscriber = { key: "", clientId: "", organization: "", uri: "" };
    /** Registered as a partner too, but with no read access to AWBs. */
    const stranger = { key: "", clientId: "", organization: "", uri: "" };
    /** A client the operator registered no server for. */
    let unregisteredKey = "";
    let unregisteredUri = "";

    beforeAll(async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      partnerServer = `${receiver.url}/ok/forwarder`;
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${url}/onerecord`;
      const partners = createPartnerAdmin(app.database.prisma, undefined);
      const client = async (who: typeof subscriber, name: string, scopes: string[]) => {
        const created = await app.services.clients.createClient({ name, callbackPrefixes: ["*"] });
        who.key = (await app.services.clients.issueKey(created.clientId, scopes)).key;
        who.clientId = created.clientId;
        who.organization = `organization-${created.clientId}`;
        who.uri = `${base}/logistics-objects/${who.organization}`;
        await partners.add({ serverUrl: partnerServer, clientId: created.clientId });
      };
      await client(subscriber, "forwarder", ["events:read"]);
      await client(stranger, "stranger", ["events:write"]);
      const unregistered = await app.services.clients.createClient({ name: "unregistered", callbackPrefixes: ["*"] });
      unregisteredKey = (await app.services.clients.issueKey(unregistered.clientId, ["events:read"])).key;
      unregisteredUri = `${base}/logistics-objects/organization-${unregistered.clientId}`;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const awbWithMilestone = async () => {
      const awb = nextAwb();
      const res = await postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb, state: "RCS", station: "FRA" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
      return awb;
    };
    const subscription = (topic: string, fields: Record<string, unknown> = {}, who = subscriber) => ({
      "@context": CONTEXT,
      "@type": "api:Subscription",
      "api:hasContentType": "application/ld+json",
      "api:hasSubscriber": { "@id": who.uri },
      "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
      "api:includeSubscriptionEventType": [
        { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
        { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
      ],
      "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": topic },
      ...fields,
    });
    const subscribe = (body: unknown, token = subscriber.key) =>
      oneRecord(`${base}/subscriptions`, { method: "POST", body, token });
    const requested = (res: OneRecordAnswer) => {
      expect([res.status, res.text]).toEqual([201, ""]);
      expect(res.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${base}/action-requests/[0-9a-f-]{36}$`));
      return location;
    };
    const read = (request: string, token = subscriber.key, accept?: string) =>
      oneRecord(request, { token, ...(accept ? { accept } : {}) });
    const rowOf = (request: string) =>
      app.database.prisma.oneRecordSubscription.findUniqueOrThrow({ where: { id: request.split("/").pop()! } });
    const stored = () => app.database.prisma.oneRecordSubscription.count();
    const createPiece = async () => {
      const res = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:goodsDescription": "BOOKS" },
      });
      expect(res.status).toBe(201);
      return res.headers.get("location")!;
    };

    it("accepts a reader's subscription to an AWB's Shipment: 201 with the SubscriptionRequest, which reads back as the specification's example", async () => {
      const awb = await awbWithMilestone();
      const topic = `${base}/logistics-objects/shipment-${awb}`;
      const request = requested(
        await subscribe(
          subscription(topic, {
            "@id": "https://1r.forwarder.example/subscriptions/mine-1",
            "api:sendLogisticsObjectBody": true,
            "api:hasDescription": "the AWB's milestones",
            "api:expiresAt": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2099-01-01T00:00:00Z" },
          }),
        ),
      );
      const res = await read(request);
      expect(res.status).toBe(200);
      expect(res.headers.get("type")).toBe(`${API}SubscriptionRequest`);
      expect(res.headers.get("location")).toBe(request);
      expect(res.headers.get("last-modified")).toMatch(/GMT$/);
      await assertConforms(res.body);
      expect(res.body).toMatchObject({
        "@id": request,
        "@type": "api:SubscriptionRequest",
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:isRequestedBy": { "@id": subscriber.uri },
        "api:hasRequestStatusHistory": {
          "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" },
          "api:isChangedBy": { "@id": `${base}/logistics-objects/organization-carrier` },
        },
        "api:hasSubscription": {
          "@id": "https://1r.forwarder.example/subscriptions/mine-1",
          "@type": "api:Subscription",
          "api:hasSubscriber": { "@id": subscriber.uri },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:hasTopic": topic,
          "api:hasContentType": "application/ld+json",
          "api:hasDescription": "the AWB's milestones",
          "api:sendLogisticsObjectBody": true,
          "api:notifyRequestStatusChange": false,
          "api:expiresAt": "2099-01-01T00:00:00Z",
          "api:includeSubscriptionEventType": [
            { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
            { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
          ],
        },
      });
      expect(res.body["api:hasError"]).toBeUndefined();
      expect(await rowOf(request)).toMatchObject({
        status: "REQUEST_ACCEPTED",
        initiatedBy: "SUBSCRIBER",
        requestedBy: subscriber.organization,
        subscriber: subscriber.organization,
        topicType: "LOGISTICS_OBJECT_IDENTIFIER",
        topic: `shipment-${awb}`,
        awb,
        eventTypes: ["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED"],
        sendBody: true,
        endpoint: `${partnerServer}/notifications`,
        origin: new URL(partnerServer).origin,
        clientId: subscriber.clientId,
      });
      // The holder reads it too; a 2.2.0 answer leaves out what 2.3.0 added.
      expect((await read(request, ADMIN_KEY)).status).toBe(200);
      const older = await read(request, subscriber.key, "application/ld+json; version=2.2.0");
      expect(older.status).toBe(200);
      expect(older.body["api:hasRequestStatusSince"]).toBeUndefined();
      expect(older.body["api:hasRequestStatusHistory"]).toBeUndefined();
      // The AWB's next milestone counts the ONE Record subscriber it notifies; a duplicate counts none.
      const milestone = { eventId: `sub-${awb}`, awb, state: "DEP", station: "FRA", flight: "LH8160" };
      const headers = { authorization: `Bearer ${ADMIN_KEY}` };
      const ingested = await postJson(`${url}/carrier/handling/shipment/events`, milestone, headers);
      expect(ingested.status).toBe(202);
      expect(
        (ingested.body as { events: Array<{ matchedSubscriptions: number }> }).events[0]!.matchedSubscriptions,
      ).toBe(1);
      const again = await postJson(`${url}/carrier/handling/shipment/events`, milestone, headers);
      expect((again.body as { events: Array<{ matchedSubscriptions: number }> }).events[0]!.matchedSubscriptions).toBe(
        0,
      );
    });

    it("stores a subscription to an object the caller may not read as rejected, saying why; one it may read is accepted", async () => {
      const piece = await createPiece();
      const request = requested(await subscribe(subscription(piece)));
      const res = await read(request);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_REJECTED" },
        "api:hasError": {
          "@type": "api:Error",
          "api:hasTitle": "Not authorized to perform action",
          "api:hasErrorDetail": {
            "api:hasCode": "403",
            "api:hasMessage": expect.stringContaining(`You may not read ${piece}`),
            "api:hasResource": piece,
          },
        },
      });
      await createOperatorGrants(app.database.prisma, undefined).grant(
        piece.split("/").pop()!,
        subscriber.organization,
      );
      const again = await read(requested(await subscribe(subscription(piece))));
      expect(again.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_ACCEPTED" });
      // An AWB's objects are read with events:read: without it, rejected.
      const awb = await awbWithMilestone();
      const refused = await read(
        requested(
          await subscribe(subscription(`${base}/logistics-objects/waybill-${awb}`, {}, stranger), stranger.key),
        ),
        stranger.key,
      );
      expect(refused.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_REJECTED" });
    });

    it("accepts a subscription to a class for any caller: each notification is filtered by what it may read", async () => {
      const body = subscription(
        `${CARGO}Shipment`,
        { "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_TYPE" } },
        stranger,
      );
      const request = requested(await subscribe(body, stranger.key));
      const res = await read(request, stranger.key);
      expect(res.body).toMatchObject({
        "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
        "api:hasSubscription": { "api:hasTopic": `${CARGO}Shipment` },
      });
      expect(await rowOf(request)).toMatchObject({
        topicType: "LOGISTICS_OBJECT_TYPE",
        topic: `${CARGO}Shipment`,
        awb: null,
      });
    });

    it("queues the SUBSCRIPTION_REQUEST_ACCEPTED notification with the request when asked to, and none otherwise", async () => {
      const awb = await awbWithMilestone();
      const topic = `${base}/logistics-objects/shipment-${awb}`;
      const request = requested(await subscribe(subscription(topic, { "api:notifyRequestStatusChange": true })));
      const quiet = requested(
        await subscribe(subscription(`${base}/logistics-objects/shipment-${await awbWithMilestone()}`)),
      );
      const notifications = await app.database.prisma.delivery.findMany({
        where: { kind: "ONE_RECORD", payload: { contains: request } },
      });
      expect(notifications).toHaveLength(1);
      expect(notifications[0]).toMatchObject({
        callback: `${partnerServer}/notifications`,
        clientId: subscriber.clientId,
        oneRecordSubscriptionId: null,
        eventId: null,
      });
      const body = JSON.parse(notifications[0]!.payload);
      await assertConforms(body);
      expect(body).toMatchObject({
        "@type": "api:Notification",
        "api:hasEventType": { "@id": "api:SUBSCRIPTION_REQUEST_ACCEPTED" },
        "api:hasLogisticsObject": { "@id": topic },
        "api:hasLogisticsObjectType": { "@value": `${CARGO}Shipment` },
        "api:isTriggeredBy": { "@id": request },
      });
      expect(await app.database.prisma.delivery.count({ where: { payload: { contains: quiet } } })).toBe(0);
    });

    describe("refuses, storing nothing,", () => {
      const refusals: Array<[string, () => Promise<unknown>, number, string]> = [
        [
          "a body that is no api:Subscription",
          async () => ({ ...(await shipmentBody()), "@type": "cargo:Piece" }),
          400,
          `${API}Subscription`,
        ],
        [
          "a property api:Subscription does not have",
          async () => ({ ...(await shipmentBody()), "api:hasRevision": 3 }),
          400,
          `${API}hasRevision`,
        ],
        [
          "a topic type that is no TopicType",
          async () => ({ ...(await shipmentBody()), "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT" } }),
          400,
          `${API}hasTopicType`,
        ],
        ["no topic", async () => omit(await shipmentBody(), "api:hasTopic"), 400, `${API}hasTopic`],
        [
          "a description over 1,000 characters",
          async () => ({ ...(await shipmentBody()), "api:hasDescription": "x".repeat(1_001) }),
          400,
          `${API}hasDescription`,
        ],
        [
          "a topic that is no URI",
          async () => ({ ...(await shipmentBody()), "api:hasTopic": "shipment-020-12345675" }),
          400,
          `${API}hasTopic`,
        ],
        [
          "a class that is no LogisticsObject",
          async () => ({
            ...(await shipmentBody()),
            "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_TYPE" },
            "api:hasTopic": `${CARGO}ForkLift`,
          }),
          400,
          `${API}hasTopic`,
        ],
        [
          "no event type",
          async () => omit(await shipmentBody(), "api:includeSubscriptionEventType"),
          400,
          `${API}includeSubscriptionEventType`,
        ],
        [
          "an event type one does not subscribe to",
          async () => ({
            ...(await shipmentBody()),
            "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_OBJECT_AVAILABLE" },
          }),
          400,
          `${API}includeSubscriptionEventType`,
        ],
        ["no subscriber", async () => omit(await shipmentBody(), "api:hasSubscriber"), 400, `${API}hasSubscriber`],
        [
          "an expiry that is no dateTime",
          async () => ({ ...(await shipmentBody()), "api:expiresAt": "tomorrow" }),
          400,
          `${API}expiresAt`,
        ],
        [
          "a flag that is no boolean",
          async () => ({ ...(await shipmentBody()), "api:sendLogisticsObjectBody": "yes" }),
          400,
          `${API}sendLogisticsObjectBody`,
        ],
        [
          "an expiry passed",
          async () => ({
            ...(await shipmentBody()),
            "api:expiresAt": { "@type": "http://www.w3.org/2001/XMLSchema#dateTime", "@value": "2020-01-01T00:00:00Z" },
          }),
          422,
          `${API}expiresAt`,
        ],
        [
          "a topic object that does not exist",
          async () => subscription(`${base}/logistics-objects/7a0e2f0e-0000-4000-8000-000000000000`),
          422,
          `${API}hasTopic`,
        ],
        [
          "an AWB the gateway does not know",
          async () => subscription(`${base}/logistics-objects/shipment-${nextAwb()}`),
          422,
          `${API}hasTopic`,
        ],
        [
          "another server's object",
          async () => subscription("https://1r.elsewhere.example/logistics-objects/abc"),
          422,
          `${API}hasTopic`,
        ],
        [
          "the carrier's reference data",
          async () => subscription(`${base}/logistics-objects/location-FRA`),
          422,
          `${API}hasTopic`,
        ],
        [
          "content types without JSON-LD",
          async () => ({ ...(await shipmentBody()), "api:hasContentType": ["text/turtle"] }),
          422,
          `${API}hasContentType`,
        ],
      ];
      let shipment: string | undefined;
      const shipmentBody = async () => {
        shipment ??= `${base}/logistics-objects/shipment-${await awbWithMilestone()}`;
        return subscription(shipment);
      };
      const omit = (body: Record<string, unknown>, key: string) =>
        Object.fromEntries(Object.entries(body).filter(([k]) => k !== key));

      it.each(refusals)("%s", async (_name, body, status, property) => {
        const given = await body();
        const before = await stored();
        const res = await subscribe(given);
        expect(res.status).toBe(status);
        await assertConforms(res.body);
        const details = [res.body["api:hasErrorDetail"]].flat();
        expect(details.map((d: any) => d["api:hasProperty"])).toContain(property);
        expect(await stored()).toBe(before);
      });

      it("a client whose ONE Record server the operator never registered (422, saying how)", async () => {
        const before = await stored();
        const res = await subscribe(
          subscription((await shipmentBody())["api:hasTopic"]["@value"], {}, { uri: unregisteredUri } as never),
          unregisteredKey,
        );
        expect(res.status).toBe(422);
        expect(res.text).toContain("npm run admin -- partner:add");
        expect(await stored()).toBe(before);
      });

      it("past the subscriber's cap (409), and again once one is revoked", async () => {
        const capped = await app.services.clients.createClient({
          name: "capped",
          callbackPrefixes: ["*"],
          maxSubscriptions: 1,
        });
        const key = (await app.services.clients.issueKey(capped.clientId, ["events:read"])).key;
        await createPartnerAdmin(app.database.prisma, undefined).add({
          serverUrl: partnerServer,
          clientId: capped.clientId,
        });
        const who = { uri: `${base}/logistics-objects/organization-${capped.clientId}` } as never;
        const topic = (await shipmentBody())["api:hasTopic"]["@value"];
        const first = requested(await subscribe(subscription(topic, {}, who), key));
        const before = await stored();
        const another = `${base}/logistics-objects/shipment-${await awbWithMilestone()}`;
        const refused = await subscribe(subscription(another, {}, who), key);
        expect(refused.status).toBe(409);
        expect(refused.text).toContain("as many live ONE Record subscriptions");
        expect(await stored()).toBe(before);
        expect((await oneRecord(first, { method: "DELETE", token: key })).status).toBe(204);
        requested(await subscribe(subscription(another, {}, who), key));
      });

      it("a second live subscription of the subscriber to the same topic (409 naming the standing one); once it is revoked, a new one", async () => {
        const topic = `${base}/logistics-objects/shipment-${await awbWithMilestone()}`;
        const first = requested(await subscribe(subscription(topic)));
        const before = await stored();
        // Other terms make no second subscription either: the specification changes one by revoking it.
        const refused = await subscribe(subscription(topic, { "api:sendLogisticsObjectBody": true }));
        expect(refused.status).toBe(409);
        expect(refused.text).toContain(first);
        expect(await stored()).toBe(before);
        expect((await oneRecord(first, { method: "DELETE", token: subscriber.key })).status).toBe(204);
        requested(await subscribe(subscription(topic, { "api:sendLogisticsObjectBody": true })));
      });

      it("a type subscription of the same class twice (409), and past the type subscriptions a subscriber may hold (409)", async () => {
        const organization = async () => {
          const client = await app.services.clients.createClient({ name: "typed", callbackPrefixes: ["*"] });
          const key = (await app.services.clients.issueKey(client.clientId, ["events:read"])).key;
          await createPartnerAdmin(app.database.prisma, undefined).add({
            serverUrl: partnerServer,
            clientId: client.clientId,
          });
          return { key, who: { uri: `${base}/logistics-objects/organization-${client.clientId}` } as never };
        };
        const { key, who } = await organization();
        const byType = (cls: string) =>
          subscribe(
            subscription(`${CARGO}${cls}`, { "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_TYPE" } }, who),
            key,
          );
        const classes = Array.from({ length: MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS }, (_, i) => TYPE_CLASSES[i]!);
        requested(await byType(classes[0]!));
        const twice = await byType(classes[0]!);
        expect(twice.status).toBe(409);
        for (const cls of classes.slice(1)) requested(await byType(cls));
        const before = await stored();
        const past = await byType(TYPE_CLASSES[MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS]!);
        expect(past.status).toBe(409);
        expect(past.text).toContain("Logistics Object types");
        expect(await stored()).toBe(before);
      });
    });

    describe("its SubscriptionRequest", () => {
      const accepted = async (fields: Record<string, unknown> = {}) => {
        const awb = await awbWithMilestone();
        return requested(await subscribe(subscription(`${base}/logistics-objects/shipment-${awb}`, fields)));
      };
      /** A notification queued for the subscription, not yet due: the worker leaves it alone. */
      const queuedFor = async (request: string) => {
        const row = await rowOf(request);
        return (
          await app.database.prisma.delivery.create({
            data: {
              kind: "ONE_RECORD",
              oneRecordSubscriptionId: row.id,
              clientId: row.clientId,
              callback: row.endpoint,
              origin: row.origin,
              payload: "{}",
              nextAttemptAt: new Date(Date.now() + 3_600_000),
            },
          })
        ).id;
      };

      it("reads REQUEST_FAILED with the reason while delivery has disabled it, and REQUEST_ACCEPTED again once the operator enables it", async () => {
        const request = await accepted();
        const disabledAt = new Date(Date.now() - 60_000);
        await app.database.prisma.oneRecordSubscription.update({
          where: { id: (await rowOf(request)).id },
          data: { disabledAt, disabledReason: "every delivery attempt failed since 2026-11-24T10:00:00Z" },
        });
        const failed = await read(request);
        expect(failed.status).toBe(200);
        expect(failed.body).toMatchObject({
          "api:hasRequestStatus": { "@id": "api:REQUEST_FAILED" },
          "api:hasRequestStatusSince": canonicalLiteral(`${XSD}dateTime`, disabledAt.toISOString()),
          "api:hasError": {
            "@type": "api:Error",
            "api:hasErrorDetail": {
              "api:hasCode": "502",
              "api:hasMessage": expect.stringContaining("every delivery attempt failed since 2026-11-24T10:00:00Z"),
            },
          },
        });
        const history = [failed.body["api:hasRequestStatusHistory"]].flat();
        expect(history.map((entry: any) => entry["api:hasRequestStatus"]["@id"])).toEqual([
          "api:REQUEST_PENDING",
          "api:REQUEST_ACCEPTED",
        ]);
        const enabling = new Date();
        expect(await app.services.deliveries.oneRecord.enable((await rowOf(request)).id)).toBe(true);
        const enabled = await read(request);
        expect(enabled.body["api:hasRequestStatus"]).toEqual({ "@id": "api:REQUEST_ACCEPTED" });
        expect(enabled.body["api:hasError"]).toBeUndefined();
        // Accepted since the enable, not since the first acceptance, and the failed spell stays in the history.
        const since = new Date(enabled.body["api:hasRequestStatusSince"]);
        expect(since.getTime()).toBeGreaterThanOrEqual(enabling.getTime());
        const after = [enabled.body["api:hasRequestStatusHistory"]].flat();
        expect(
          after.map((entry: any) => [entry["api:hasRequestStatus"]["@id"], entry["api:hasRequestStatusSince"]]),
        ).toEqual([
          ["api:REQUEST_PENDING", expect.any(String)],
          ["api:REQUEST_ACCEPTED", expect.any(String)],
          ["api:REQUEST_FAILED", canonicalLiteral(`${XSD}dateTime`, disabledAt.toISOString())],
        ]);
      });

      it("is not read by a stranger (403), nor decided by anyone: decided on arrival (422), and only by the holder (403)", async () => {
        const request = await accepted();
        expect((await read(request, stranger.key)).status).toBe(403);
        const decide = (status: string, token: string) =>
          oneRecord(`${request}?status=${status}`, { method: "PATCH", token });
        const byHolder = await decide("REQUEST_REJECTED", ADMIN_KEY);
        expect(byHolder.status).toBe(422);
        expect(byHolder.text).toContain("ACTION_REQUEST_DECIDED");
        expect((await decide("REQUEST_ACCEPTED", subscriber.key)).status).toBe(403);
        expect((await decide("REQUEST_ACCEPTED", stranger.key)).status).toBe(403);
        expect((await rowOf(request)).status).toBe("REQUEST_ACCEPTED");
      });

      it("is revoked by its subscriber: its queued notifications end DEAD with their lease cleared, and a second revocation is 422", async () => {
        const request = await accepted({ "api:notifyRequestStatusChange": true });
        const pending = await queuedFor(request);
        const res = await oneRecord(request, { method: "DELETE", token: subscriber.key });
        expect([res.status, res.text]).toEqual([204, ""]);
        expect(await app.database.prisma.delivery.findUniqueOrThrow({ where: { id: pending } })).toMatchObject({
          status: "DEAD",
          lastError: "subscription revoked",
          leaseToken: null,
        });
        const after = await read(request);
        expect(after.body).toMatchObject({
          "api:hasRequestStatus": { "@id": "api:REQUEST_REVOKED" },
          "api:isRevokedBy": { "@id": subscriber.uri },
          "api:hasRequestStatusHistory": [
            { "api:hasRequestStatus": { "@id": "api:REQUEST_PENDING" } },
            { "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" }, "api:isChangedBy": { "@id": subscriber.uri } },
          ],
        });
        expect(after.body["api:isRevokedAt"]).toBe(after.body["api:hasRequestStatusSince"]);
        // Told to the subscriber, under no subscription: the revoked one takes no more notifications.
        const told = await app.database.prisma.delivery.findMany({
          where: { kind: "ONE_RECORD", payload: { contains: "SUBSCRIPTION_REQUEST_REVOKED" } },
        });
        expect(told.filter((d) => d.payload.includes(request))).toHaveLength(1);
        const again = await oneRecord(request, { method: "DELETE", token: subscriber.key });
        expect(again.status).toBe(422);
        expect(again.text).toContain("ACTION_REQUEST_DECIDED");
      });

      it("is revoked by the holder (PATCH ?status=REQUEST_REVOKED), and not by a stranger (403)", async () => {
        const request = await accepted();
        expect((await oneRecord(request, { method: "DELETE", token: stranger.key })).status).toBe(403);
        expect((await rowOf(request)).status).toBe("REQUEST_ACCEPTED");
        const res = await oneRecord(`${request}?status=REQUEST_REVOKED`, { method: "PATCH", token: ADMIN_KEY });
        expect(res.status).toBe(204);
        expect(res.headers.get("type")).toBe(`${API}SubscriptionRequest`);
        expect(res.headers.get("location")).toBe(request);
        expect(await rowOf(request)).toMatchObject({
          status: "REQUEST_REVOKED",
          decidedBy: expect.stringMatching(/^organization-/),
        });
      });

      it("a rejected one is not revocable (422)", async () => {
        const request = requested(await subscribe(subscription(await createPiece())));
        const res = await oneRecord(request, { method: "DELETE", token: subscriber.key });
        expect(res.status).toBe(422);
      });
    });
  });
});
