import type { App } from "../../src/app";
import { createPartnerAdmin } from "../../src/onerecord/partners/partner-admin";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { postJson } from "../support/http";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";
import { type ReceivedPost, startReceiver } from "../support/receiver";

const API = "https://onerecord.iata.org/ns/api#";
const CARGO = "https://onerecord.iata.org/ns/cargo#";
let serial = 6_000_000 + (process.pid % 1000) * 100;
const nextAwb = () => {
  const n = String(++serial);
  return `020-${n}${Number(n) % 7}`;
};

type Body = Record<string, any>;

/**
 * A milestone in, a notification out: a forwarder subscribes through POST /subscriptions, the carrier
 * ingests a milestone, and the gateway's own worker POSTs the api:Notification to the forwarder's
 * registered server (a real HTTP receiver), on both databases.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record notifications end to end on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let forwarder: { key: string; uri: string };
    const server = () => `${receiver.url}/ok/forwarder`;

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${app.url()}/onerecord`;
      const created = await app.services.clients.createClient({ name: "forwarder", callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(created.clientId, ["events:read"]);
      forwarder = { key, uri: `${base}/logistics-objects/organization-${created.clientId}` };
      await createPartnerAdmin(app.database.prisma, undefined).add({ serverUrl: server(), clientId: created.clientId });
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const milestone = async (awb: string, state: string) => {
      const res = await postJson(
        `${app.url()}/carrier/handling/shipment/events`,
        { awb, state, station: "FRA", timestamp: "2026-11-20T08:00:00Z" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res.status).toBe(202);
    };

    /** The next POST to the forwarder's notifications whose body satisfies `wanted`. */
    const nextNotification = (wanted: (body: Body) => boolean) =>
      new Promise<{ post: ReceivedPost; body: Body }>((resolve) => {
        const seen = (post: ReceivedPost) => {
          if (post.path !== "/ok/forwarder/notifications") return;
          const body = JSON.parse(post.body) as Body;
          if (wanted(body)) resolve({ post, body });
        };
        receiver.posts.forEach(seen);
        receiver.onPost(seen);
      });

    it("a milestone ingested after a subscription made through the specification's flow arrives as an api:Notification", async () => {
      const awb = nextAwb();
      await milestone(awb, "RCS");
      const shipment = `${base}/logistics-objects/shipment-${awb}`;
      const subscribed = await oneRecord(`${base}/subscriptions`, {
        method: "POST",
        token: forwarder.key,
        body: {
          "@context": { api: API, cargo: CARGO },
          "@type": "api:Subscription",
          "api:hasContentType": "application/ld+json",
          "api:hasSubscriber": { "@id": forwarder.uri },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": shipment },
          "api:includeSubscriptionEventType": [{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }],
        },
      });
      expect(subscribed.status).toBe(201);
      const request = subscribed.headers.get("location")!;

      const arrived = nextNotification((body) => body["api:hasEventType"]?.["@id"] === "api:LOGISTICS_EVENT_RECEIVED");
      await milestone(awb, "DEP");
      const { post, body } = await arrived;

      const [dep] = await app.database.prisma.statusEvent.findMany({ where: { awb, state: "DEP" } });
      const [delivery] = await app.database.prisma.delivery.findMany({
        where: { eventId: dep!.id, kind: "ONE_RECORD" },
      });
      expect(post.headers["notification-id"]).toBe(delivery!.id);
      expect(post.headers["content-type"]).toBe("application/ld+json; version=2.3.0");
      expect(body).toMatchObject({
        "api:hasLogisticsObject": { "@id": shipment },
        "api:hasLogisticsEvent": { "@id": `${shipment}/logistics-events/${dep!.id}` },
        "api:isTriggeredBy": { "@id": request },
      });
      await assertConforms(body);
      // The forwarder follows the link to the event it was told of.
      const event = await oneRecord(body["api:hasLogisticsEvent"]["@id"], { token: forwarder.key });
      expect(event.status).toBe(200);
      expect(event.body["cargo:eventCode"]).toEqual({
        "@id": "https://onerecord.iata.org/ns/code-lists/StatusCode#DEP",
      });
    });
  });
});
