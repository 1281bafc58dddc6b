import type { App } from "../../src/app";
import {
  createSubscriptionWishes,
  type SubscriptionWishes,
} from "../../src/onerecord/notifications-in/subscription-wishes";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { oneRecord } from "../support/onerecord-requests";

const API = "https://onerecord.iata.org/ns/api#";
const CARGO = "https://onerecord.iata.org/ns/cargo#";
const IDENTIFIER = encodeURIComponent(`${API}LOGISTICS_OBJECT_IDENTIFIER`);
const TYPE = encodeURIComponent(`${API}LOGISTICS_OBJECT_TYPE`);
const PUBLISHER = "https://1r.publisher.test/logistics-objects/";

/**
 * GET {base}/subscriptions?topicType=&topic= on both databases: what this server wants when another
 * publisher proposes a subscription (docs/ONE-RECORD.md "Receiving notifications").
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record subscription wishes on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let key = "";
    let wishes: SubscriptionWishes;

    beforeAll(async () => {
      let url: string;
      // The operator wants only what its wishes name.
      ({ app, url } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        ONE_RECORD_SUBSCRIBE_TO: "wishes",
      }));
      base = `${url}/onerecord`;
      const client = await app.services.clients.createClient({ name: "publisher", callbackPrefixes: ["*"] });
      key = (await app.services.clients.issueKey(client.clientId, ["events:write"])).key;
      wishes = createSubscriptionWishes(app.database.prisma);
      await wishes.want({
        topicType: "LOGISTICS_OBJECT_IDENTIFIER",
        topic: PUBLISHER,
        events: ["LOGISTICS_EVENT_RECEIVED"],
      });
      await wishes.want({
        topicType: "LOGISTICS_OBJECT_IDENTIFIER",
        topic: `${PUBLISHER}shipment-`,
        events: ["api:LOGISTICS_OBJECT_UPDATED", `${API}LOGISTICS_EVENT_RECEIVED`],
        sendBody: true,
        description: "the publisher's shipments, with their bodies",
      });
      await wishes.want({
        topicType: `${API}LOGISTICS_OBJECT_TYPE`,
        topic: `${CARGO}Shipment`,
        events: ["LOGISTICS_OBJECT_CREATED"],
      });
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    const ask = (query: string, token: string | null = key) => oneRecord(`${base}/subscriptions?${query}`, { token });

    it("answers the most specific wish for an object's URI as an api:Subscription (checked against the shapes)", async () => {
      const topic = `${PUBLISHER}shipment-020-12345675`;
      const res = await ask(`topicType=${IDENTIFIER}&topic=${encodeURIComponent(topic)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(res.headers.get("content-language")).toBe("en-US");
      expect(res.body).toEqual(
        expect.objectContaining({
          "@type": "api:Subscription",
          "@id": expect.stringMatching(new RegExp(`^${base}/subscriptions/[0-9a-f-]{36}$`)),
          "api:hasSubscriber": { "@id": `${base}/logistics-objects/organization-carrier` },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:hasTopic": topic,
          "api:hasContentType": "application/ld+json",
          "api:includeSubscriptionEventType": [
            { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
            { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
          ],
          "api:sendLogisticsObjectBody": true,
          "api:hasDescription": "the publisher's shipments, with their bodies",
        }),
      );
      // Another object of that publisher: the wider wish.
      const piece = await ask(`topicType=${IDENTIFIER}&topic=${encodeURIComponent(`${PUBLISHER}piece-1`)}`);
      expect(piece.status).toBe(200);
      expect(piece.body["api:includeSubscriptionEventType"]).toEqual([{ "@id": "api:LOGISTICS_EVENT_RECEIVED" }]);
      expect(piece.body["api:sendLogisticsObjectBody"]).toBe(false);
    });

    it("takes the topic type with # as %23 or /, and a class topic likewise", async () => {
      for (const [topicType, topic] of [
        [TYPE, encodeURIComponent(`${CARGO}Shipment`)],
        [`https://onerecord.iata.org/ns/api/LOGISTICS_OBJECT_TYPE`, "https://onerecord.iata.org/ns/cargo/Shipment"],
      ]) {
        const res = await ask(`topicType=${topicType}&topic=${topic}`);
        expect(res.status).toBe(200);
        expect(res.body["api:hasTopicType"]).toEqual({ "@id": "api:LOGISTICS_OBJECT_TYPE" });
        expect(res.body["api:hasTopic"]).toBe(`${CARGO}Shipment`);
        expect(res.body["api:includeSubscriptionEventType"]).toEqual([{ "@id": "api:LOGISTICS_OBJECT_CREATED" }]);
      }
    });

    it("answers 422 for a topic this server wants nothing of", async () => {
      for (const query of [
        `topicType=${IDENTIFIER}&topic=${encodeURIComponent("https://1r.elsewhere.test/logistics-objects/x")}`,
        `topicType=${TYPE}&topic=${encodeURIComponent(`${CARGO}Piece`)}`,
      ]) {
        const res = await ask(query);
        expect(res.status).toBe(422);
        expect(res.body["@type"]).toBe("api:Error");
        expect(res.body["api:hasErrorDetail"][0]["api:hasMessage"]).toMatch(/^SUBSCRIPTION_NOT_WANTED: /);
      }
    });

    it.each([
      ["topicType missing", `topic=${encodeURIComponent(`${PUBLISHER}x`)}`, "topicType"],
      ["topic missing", `topicType=${IDENTIFIER}`, "topic"],
      ["topic empty", `topicType=${IDENTIFIER}&topic=`, "topic"],
      ["an unknown topic type", `topicType=${encodeURIComponent(`${API}LOGISTICS_OBJECT_NAME`)}&topic=x`, "topicType"],
      ["an object topic that is no URI", `topicType=${IDENTIFIER}&topic=shipment-020-12345675`, "topic"],
      [
        "a class outside the cargo ontology",
        `topicType=${TYPE}&topic=${encodeURIComponent(`${CARGO}ForkLift`)}`,
        "topic",
      ],
      [
        "a cargo class that is no LogisticsObject",
        `topicType=${TYPE}&topic=${encodeURIComponent(`${CARGO}Value`)}`,
        "topic",
      ],
      [
        "a parameter given twice",
        `topicType=${IDENTIFIER}&topicType=${IDENTIFIER}&topic=${encodeURIComponent(`${PUBLISHER}x`)}`,
        "topicType",
      ],
    ])("answers 400 for %s", async (_name, query, parameter) => {
      const res = await ask(query);
      expect(res.status).toBe(400);
      expect(res.body["api:hasTitle"]).toBe("Invalid query parameter request");
      expect(res.body["api:hasErrorDetail"][0]["api:hasMessage"]).toMatch(
        new RegExp(`^INVALID_QUERY_PARAMETER: ${parameter}: `),
      );
    });

    it("answers 401 without credentials", async () => {
      const res = await ask(`topicType=${TYPE}&topic=${encodeURIComponent(`${CARGO}Shipment`)}`, null);
      expect(res.status).toBe(401);
    });

    it("once the wish is removed, the topic is not wanted (422); added again, wanted", async () => {
      const topic = "https://1r.other.test/logistics-objects/";
      const query = `topicType=${IDENTIFIER}&topic=${encodeURIComponent(`${topic}abc`)}`;
      await wishes.want({ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic, events: ["LOGISTICS_OBJECT_UPDATED"] });
      expect((await ask(query)).status).toBe(200);
      await wishes.unwant("LOGISTICS_OBJECT_IDENTIFIER", topic);
      // The publisher's wider wish does not cover another server's objects.
      expect((await ask(query)).status).toBe(422);
    });
  });
});

describe.each(BEHAVIOUR_BACKENDS)("a publisher's question on default settings on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let base: string;
    let key: string;
    beforeAll(async () => {
      const { app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" });
      base = `${url}/onerecord`;
      const client = await app.services.clients.createClient({ name: "publisher", callbackPrefixes: ["*"] });
      key = (await app.services.clients.issueKey(client.clientId, ["events:write"])).key;
    }, 120_000);
    afterAll(() => disposers.disposeAll());

    it("wants any topic proposed, with every event type and no bodies, as the specification's flow has it", async () => {
      const topic = "https://1r.elsewhere.test/logistics-objects/piece-1";
      const query = `topicType=${IDENTIFIER}&topic=${encodeURIComponent(topic)}`;
      const res = await oneRecord(`${base}/subscriptions?${query}`, { token: key });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        "@type": "api:Subscription",
        "api:hasSubscriber": { "@id": `${base}/logistics-objects/organization-carrier` },
        "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
        "api:hasTopic": topic,
        "api:sendLogisticsObjectBody": false,
      });
      const events = (res.body["api:includeSubscriptionEventType"] as Array<{ "@id": string }>).map((e) => e["@id"]);
      expect(events.sort()).toEqual([
        "api:LOGISTICS_EVENT_RECEIVED",
        "api:LOGISTICS_OBJECT_CREATED",
        "api:LOGISTICS_OBJECT_UPDATED",
      ]);
      // The same question, the same subscription; a class topic is wanted too.
      expect((await oneRecord(`${base}/subscriptions?${query}`, { token: key })).body["@id"]).toBe(res.body["@id"]);
      const type = await oneRecord(
        `${base}/subscriptions?topicType=${TYPE}&topic=${encodeURIComponent(`${CARGO}Piece`)}`,
        {
          token: key,
        },
      );
      expect([type.status, type.body["api:hasTopic"]]).toEqual([200, `${CARGO}Piece`]);
      expect((await oneRecord(`${base}/subscriptions?${query}`, { token: null })).status).toBe(401);
    });
  });
});

describe("wishes as the operator gives them (npm run admin -- onerecord:want)", () => {
  const disposers = new Disposers();
  let wishes: SubscriptionWishes;
  beforeAll(async () => {
    const { app } = await startApp("pglite", disposers);
    wishes = createSubscriptionWishes(app.database.prisma);
  });
  afterAll(() => disposers.disposeAll());

  it("replaces the wish of the same topic; * is any object; events in the enumeration's order", async () => {
    await wishes.want({ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic: "*", events: ["LOGISTICS_OBJECT_UPDATED"] });
    const replaced = await wishes.want({
      topicType: "LOGISTICS_OBJECT_IDENTIFIER",
      topic: "*",
      events: ["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_UPDATED"],
    });
    expect(replaced).toEqual(
      expect.objectContaining({ topic: "", eventTypes: ["LOGISTICS_EVENT_RECEIVED", "LOGISTICS_OBJECT_UPDATED"] }),
    );
    expect(await wishes.list()).toHaveLength(1);
    expect(await wishes.wanted("LOGISTICS_OBJECT_IDENTIFIER", "https://anything.test/lo/1", false)).toEqual(replaced);
    await wishes.unwant("LOGISTICS_OBJECT_IDENTIFIER", "*");
    expect(await wishes.list()).toEqual([]);
  });

  it.each([
    [{ topicType: "LOGISTICS_OBJECT", topic: "*", events: ["LOGISTICS_OBJECT_UPDATED"] }, /--topic-type/],
    [
      { topicType: "LOGISTICS_OBJECT_TYPE", topic: `${CARGO}ForkLift`, events: ["LOGISTICS_OBJECT_UPDATED"] },
      /--topic /,
    ],
    [{ topicType: "LOGISTICS_OBJECT_IDENTIFIER", topic: "partner", events: ["LOGISTICS_OBJECT_UPDATED"] }, /--topic /],
    [{ topicType: "LOGISTICS_OBJECT_TYPE", topic: `${CARGO}Piece`, events: [] }, /--events/],
    [
      { topicType: "LOGISTICS_OBJECT_TYPE", topic: `${CARGO}Piece`, events: ["LOGISTICS_OBJECT_AVAILABLE"] },
      /--events.*LOGISTICS_OBJECT_AVAILABLE/,
    ],
    [
      {
        topicType: "LOGISTICS_OBJECT_TYPE",
        topic: `${CARGO}Piece`,
        events: ["LOGISTICS_OBJECT_CREATED"],
        description: "",
      },
      /--description/,
    ],
  ])("refuses %j, storing nothing", async (input, message) => {
    await expect(wishes.want(input)).rejects.toThrow(message);
    expect(await wishes.list()).toEqual([]);
  });

  it("removing a wish that is not there is NOT_FOUND", async () => {
    await expect(wishes.unwant("LOGISTICS_OBJECT_TYPE", `${CARGO}Piece`)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
