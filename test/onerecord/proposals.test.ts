import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Database } from "../../src/db/database";
import { organizationUriOf } from "../../src/onerecord/identity/organizations";
import { createPartnerClient, MAX_ANSWER_BYTES } from "../../src/onerecord/proposals/partner-client";
import { createProposalStore } from "../../src/onerecord/proposals/proposals.store";
import { startProposalWorker, type ProposalWorker } from "../../src/onerecord/proposals/proposals.worker";
import { createOneRecordUris } from "../../src/onerecord/uris";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers } from "../support/harness";
import { fixtures, openTestDatabase } from "../support/test-database";

const API = "https://onerecord.iata.org/ns/api#";
const BASE = "http://gateway.test/onerecord";
const uris = createOneRecordUris(() => BASE);
const quiet = { info: () => {}, warn: () => {} };

interface Asked {
  topicType: string | null;
  topic: string | null;
  accept: string | undefined;
  authorization: string | undefined;
  path: string;
}

type Answer = { status: number; body?: unknown; raw?: Buffer; headers?: Record<string, string> } | "hang";

/**
 * A partner's ONE Record server on 127.0.0.1: GET {server}/subscriptions answers what `answerFor`
 * says for the topic asked (per call), and records every question.
 */
async function startPartner(disposers: Disposers) {
  const asked: Asked[] = [];
  let answerFor: (topic: string, call: number, authorization: string | undefined) => Answer = () => ({ status: 422 });
  const calls = new Map<string, number>();
  const hanging: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://partner");
    const topic = url.searchParams.get("topic");
    asked.push({
      topicType: url.searchParams.get("topicType"),
      topic,
      accept: req.headers.accept,
      authorization: req.headers.authorization,
      path: url.pathname,
    });
    const call = (calls.get(topic ?? "") ?? 0) + 1;
    calls.set(topic ?? "", call);
    const answer = answerFor(topic ?? "", call, req.headers.authorization);
    if (answer === "hang") return void hanging.push(res);
    const body = answer.raw ?? (answer.body === undefined ? "" : JSON.stringify(answer.body));
    res
      .writeHead(answer.status, {
        ...(body ? { "content-type": "application/ld+json; version=2.3.0" } : {}),
        ...answer.headers,
      })
      .end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  disposers.add(async () => {
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/1r`,
    asked,
    answer: (fn: typeof answerFor) => {
      answerFor = fn;
    },
  };
}

/** The subscription a partner's subscriber side answers (the specification's Subscriptions_example1 for our topic). */
const subscriptionFor = (topic: string, subscriber: string, fields: Record<string, unknown> = {}) => ({
  "@context": { cargo: "https://onerecord.iata.org/ns/cargo#", api: API },
  "@id": "https://1r.partner.test/subscriptions/5f1a4869",
  "@type": "api:Subscription",
  "api:hasContentType": "application/ld+json",
  "api:hasSubscriber": { "@id": subscriber },
  "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
  "api:includeSubscriptionEventType": [
    { "@id": "api:LOGISTICS_OBJECT_UPDATED" },
    { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
  ],
  "api:hasTopic": { "@type": "http://www.w3.org/2001/XMLSchema#anyURI", "@value": topic },
  ...fields,
});

/**
 * Publisher-initiated subscriptions (docs/ONE-RECORD.md): the proposal loop over a real database and a
 * real partner server, on both databases.
 */
describe.each(BEHAVIOUR_BACKENDS)("ONE Record subscription proposals on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let make: ReturnType<typeof fixtures>;
    let partner: Awaited<ReturnType<typeof startPartner>>;
    let organization = "";
    let clientId = "";
    let partnerUri = "";
    const workers: ProposalWorker[] = [];
    let tokens: { issued: number; invalidated: string[] };

    beforeAll(async () => {
      ({ database: db } = await openTestDatabase(backend, disposers));
      make = fixtures(db);
      partner = await startPartner(disposers);
      clientId = await make.client();
      organization = `organization-${clientId}`;
      partnerUri = organizationUriOf(organization, (id) => uris.objectUri(id));
      await db.prisma.oneRecordPartner.create({
        data: { organization, serverUrl: `${partner.url}/`, clientId, proposeSubscriptions: true },
      });
    });
    afterAll(async () => {
      await Promise.all(workers.map((w) => w.stop()));
      await disposers.disposeAll();
    });
    beforeEach(async () => {
      await db.sql.query("DELETE FROM onerecord_proposal", []);
      await db.sql.query("DELETE FROM onerecord_subscription", []);
      await db.sql.query("DELETE FROM subscription", []);
      partner.asked.length = 0;
      tokens = { issued: 0, invalidated: [] };
    });

    /** A worker as the app builds it, with the retry delay and timeout a test can wait for. */
    const worker = (retryDelayMs = 0) => {
      const store = createProposalStore(db.sql);
      const client = createPartnerClient({
        timeoutMs: 1_000,
        tokens: {
          token: async () => `token-${++tokens.issued}`,
          invalidate: (token) => tokens.invalidated.push(token) > 0,
        },
      });
      const started = startProposalWorker({
        intervalMs: 0,
        batchSize: 5,
        leaseMs: 60_000,
        retryDelayMs: () => retryDelayMs,
        fill: (limit) => store.fill(limit),
        claim: (limit, leaseMs) => store.claim(limit, leaseMs),
        ask: (question) => client.ask(question),
        answered: (p, s) => store.answered(p, s),
        unanswered: (p, o) => store.unanswered(p, o),
        questionOf: (p) => ({ serverUrl: p.serverUrl, topic: uris.objectUri(p.topic), partnerUri }),
        log: quiet,
      });
      workers.push(started);
      return started;
    };
    /** An AWB the partner's client follows the legacy way, with a milestone: its Shipment's URI. */
    const followed = async () => {
      const awb = make.awb();
      await make.event(awb);
      await make.subscription(clientId, { awb });
      return { awb, topic: `${BASE}/logistics-objects/shipment-${awb}` };
    };
    const proposalOf = (awb: string) =>
      db.prisma.oneRecordProposal.findUniqueOrThrow({
        where: {
          partner_topicType_topic: {
            partner: organization,
            topicType: "LOGISTICS_OBJECT_IDENTIFIER",
            topic: `shipment-${awb}`,
          },
        },
      });
    const subscriptionsOf = (awb: string) => db.prisma.oneRecordSubscription.findMany({ where: { awb } });

    it("asks the partner's GET /subscriptions for the Shipment and records its subscription as an accepted SubscriptionRequest", async () => {
      const { awb, topic } = await followed();
      partner.answer((asked) => ({
        status: 200,
        body: subscriptionFor(asked, partnerUri, { "api:sendLogisticsObjectBody": true }),
      }));
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ subscribed: 1 }));
      expect(partner.asked).toEqual([
        {
          path: "/1r/subscriptions",
          topicType: `${API}LOGISTICS_OBJECT_IDENTIFIER`,
          topic,
          accept: "application/ld+json; version=2.3.0",
          authorization: "Bearer token-1",
        },
      ]);
      const [recorded, ...others] = await subscriptionsOf(awb);
      expect(others).toEqual([]);
      expect(recorded).toEqual(
        expect.objectContaining({
          status: "REQUEST_ACCEPTED",
          initiatedBy: "PUBLISHER",
          requestedBy: organization,
          subscriber: organization,
          topicType: "LOGISTICS_OBJECT_IDENTIFIER",
          topic: `shipment-${awb}`,
          eventTypes: ["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED"],
          sendBody: true,
          endpoint: `${partner.url}/notifications`,
          origin: new URL(partner.url).origin,
          clientId,
        }),
      );
      expect(await proposalOf(awb)).toEqual(
        expect.objectContaining({ status: "DONE", subscriptionId: recorded!.id, attemptCount: 1 }),
      );
      // Asked once: the next run neither proposes nor asks it again.
      await worker().runOnce();
      expect(partner.asked).toHaveLength(1);
      expect(await subscriptionsOf(awb)).toHaveLength(1);
    });

    it.each([
      ["answers 422", () => ({ status: 422, body: { "@type": "api:Error" } })],
      ["answers an empty body", () => ({ status: 200 })],
      ["answers 204", () => ({ status: 204 })],
    ])("DONE with nothing recorded when the partner %s", async (_name, answer) => {
      const { awb } = await followed();
      partner.answer(answer);
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ declined: 1 }));
      expect(await proposalOf(awb)).toEqual(expect.objectContaining({ status: "DONE", subscriptionId: null }));
      expect(await subscriptionsOf(awb)).toEqual([]);
    });

    it.each<[string, (topic: string) => { status: number; body?: unknown; raw?: Buffer }, RegExp]>([
      ["answers 403", () => ({ status: 403 }), /HTTP 403/],
      ["answers 404", () => ({ status: 404 }), /HTTP 404/],
      [
        "answers a subscription to another topic",
        () => ({ status: 200, body: subscriptionFor("https://1r.partner.test/logistics-objects/x", "") }),
        /hasTopic/,
      ],
      [
        "answers a subscription for a third party",
        (topic: string) => ({
          status: 200,
          body: subscriptionFor(topic, "https://1r.third.test/logistics-objects/org"),
        }),
        /hasSubscriber/,
      ],
      [
        "answers a subscription by type",
        (topic: string) => ({
          status: 200,
          body: subscriptionFor(topic, "", { "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_TYPE" } }),
        }),
        /hasTopicType/,
      ],
      [
        "answers an event type outside the enumeration",
        (topic: string) => ({
          status: 200,
          body: subscriptionFor(topic, "", {
            "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_OBJECT_AVAILABLE" },
          }),
        }),
        /includeSubscriptionEventType/,
      ],
      ["answers what is no JSON-LD", () => ({ status: 200, body: "subscribed" }), /not JSON-LD/],
      [
        "answers bytes that are not UTF-8",
        () => ({ status: 200, raw: Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x7d]) }),
        /not valid UTF-8/,
      ],
      [
        "answers more than MAX_ANSWER_BYTES",
        () => ({ status: 200, raw: Buffer.alloc(MAX_ANSWER_BYTES + 1, 0x20) }),
        new RegExp(`over ${MAX_ANSWER_BYTES} bytes`),
      ],
    ])("FAILED with the reason, nothing recorded, when the partner %s", async (_name, answer, reason) => {
      const { awb } = await followed();
      // An empty subscriber in the fixture stands for the partner itself.
      partner.answer((topic) => {
        const a = answer(topic);
        const body = a.body as Record<string, unknown> | undefined;
        if (body && typeof body === "object" && (body["api:hasSubscriber"] as { "@id": string })?.["@id"] === "")
          body["api:hasSubscriber"] = { "@id": partnerUri };
        return a;
      });
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ failed: 1 }));
      const proposal = await proposalOf(awb);
      expect(proposal).toEqual(expect.objectContaining({ status: "FAILED", attemptCount: 1 }));
      expect(proposal.lastError).toMatch(reason);
      expect(await subscriptionsOf(awb)).toEqual([]);
      await worker().runOnce();
      expect(partner.asked).toHaveLength(1);
    });

    it("takes a subscription naming the partner by a URI of its own server; of several in one answer (a @graph), one is recorded, the first", async () => {
      const { awb, topic } = await followed();
      partner.answer(() => ({
        status: 200,
        body: {
          "@context": { api: API },
          "@graph": [
            {
              ...subscriptionFor(topic, `${new URL(partner.url).origin}/1r/logistics-objects/me`),
              "@context": undefined,
              "@id": "https://p.test/s/1",
            },
            {
              ...subscriptionFor(topic, partnerUri),
              "@context": undefined,
              "@id": "https://p.test/s/2",
              "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_OBJECT_CREATED" },
            },
          ],
        },
      }));
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ subscribed: 1 }));
      // The proposal is for one topic: one live subscription to it, as POST /subscriptions would take.
      const recorded = await subscriptionsOf(awb);
      expect(recorded.map((r) => r.eventTypes)).toEqual([["LOGISTICS_OBJECT_UPDATED", "LOGISTICS_EVENT_RECEIVED"]]);
      expect(recorded[0]!.subscription).toEqual(expect.objectContaining({ "@id": "https://p.test/s/1" }));
    });

    it("a partner answering 500, then 200: asked again after the backoff, and the subscription recorded once (nothing lost)", async () => {
      const { awb, topic } = await followed();
      partner.answer((_topic, call) =>
        call === 1
          ? { status: 500, headers: { "retry-after": "0" } }
          : { status: 200, body: subscriptionFor(topic, partnerUri) },
      );
      const first = await worker(60_000).runOnce();
      expect(first).toEqual(expect.objectContaining({ retry: 1 }));
      expect(await proposalOf(awb)).toEqual(
        expect.objectContaining({
          status: "PENDING",
          attemptCount: 1,
          lastError: "it answered HTTP 500",
          leaseUntil: null,
        }),
      );
      // Not due yet: the next run does not ask.
      await worker().runOnce();
      expect(partner.asked).toHaveLength(1);
      await db.prisma.oneRecordProposal.update({
        where: { id: (await proposalOf(awb)).id },
        data: { nextAttemptAt: new Date(Date.now() - 1) },
      });
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ subscribed: 1 }));
      expect(partner.asked).toHaveLength(2);
      expect(await subscriptionsOf(awb)).toHaveLength(1);
      expect(await proposalOf(awb)).toEqual(
        expect.objectContaining({ status: "DONE", attemptCount: 2, lastError: null }),
      );
    });

    it("a partner that does not answer in time, or cannot be reached, is asked again later", async () => {
      const { awb } = await followed();
      partner.answer(() => "hang");
      expect(await worker(60_000).runOnce()).toEqual(expect.objectContaining({ retry: 1 }));
      expect((await proposalOf(awb)).lastError).toBe("no answer within 1 s");

      await db.prisma.oneRecordPartner.update({
        where: { organization },
        data: { serverUrl: "http://127.0.0.1:9/1r" },
      });
      try {
        await db.prisma.oneRecordProposal.update({
          where: { id: (await proposalOf(awb)).id },
          data: { nextAttemptAt: new Date(Date.now() - 1) },
        });
        expect(await worker(60_000).runOnce()).toEqual(expect.objectContaining({ retry: 1 }));
        expect(await proposalOf(awb)).toEqual(
          expect.objectContaining({ status: "PENDING", attemptCount: 2, lastError: "ECONNREFUSED" }),
        );
      } finally {
        await db.prisma.oneRecordPartner.update({ where: { organization }, data: { serverUrl: `${partner.url}/` } });
      }
    });

    it("a 401 makes it take a fresh token and ask once more within the attempt", async () => {
      const { awb, topic } = await followed();
      partner.answer((_topic, _call, authorization) =>
        authorization === "Bearer token-1"
          ? { status: 401 }
          : { status: 200, body: subscriptionFor(topic, partnerUri) },
      );
      expect(await worker().runOnce()).toEqual(expect.objectContaining({ subscribed: 1 }));
      expect(partner.asked.map((a) => a.authorization)).toEqual(["Bearer token-1", "Bearer token-2"]);
      expect(tokens.invalidated).toEqual(["token-1"]);
      expect(await subscriptionsOf(awb)).toHaveLength(1);
    });

    it("two workers (two instances) running at once ask each partner topic once and record each subscription once", async () => {
      const followedAwbs = await Promise.all(Array.from({ length: 8 }, () => followed()));
      partner.answer((topic) => ({ status: 200, body: subscriptionFor(topic, partnerUri) }));
      const runs = await Promise.all([worker().runOnce(), worker().runOnce(), worker().runOnce()]);
      expect(runs.reduce((sum, run) => sum + run.subscribed, 0)).toBe(8);
      const topics = partner.asked.map((a) => a.topic);
      expect(topics.sort()).toEqual(followedAwbs.map((f) => f.topic).sort());
      for (const { awb } of followedAwbs) expect(await subscriptionsOf(awb)).toHaveLength(1);
    });

    it("a partner that no longer asks for proposals is not asked", async () => {
      const { awb } = await followed();
      await db.prisma.oneRecordPartner.update({ where: { organization }, data: { proposeSubscriptions: false } });
      try {
        await worker().runOnce();
        expect(partner.asked).toEqual([]);
        expect(await db.prisma.oneRecordProposal.count({ where: { topic: `shipment-${awb}` } })).toBe(0);
      } finally {
        await db.prisma.oneRecordPartner.update({ where: { organization }, data: { proposeSubscriptions: true } });
      }
    });
  });
});

describe("a partner's Retry-After", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it.each<[string, () => string, (ms: number) => void]>([
    ["in seconds", () => "120", (ms) => expect(ms).toBe(120_000)],
    [
      "as an HTTP date",
      () => new Date(Date.now() + 1_800_000).toUTCString(),
      (ms) => expect(Math.abs(ms - 1_800_000)).toBeLessThan(5_000),
    ],
    ["past an hour, capped at one", () => "86400", (ms) => expect(ms).toBe(3_600_000)],
  ])("%s is when it is asked again", async (_name, header, check) => {
    const partner = await startPartner(disposers);
    partner.answer(() => ({ status: 503, headers: { "retry-after": header() } }));
    const answer = await createPartnerClient({ timeoutMs: 2_000 }).ask({
      serverUrl: partner.url,
      topic: "https://carrier.test/logistics-objects/shipment-020-12345675",
      partnerUri: "https://partner.test/logistics-objects/organization",
    });
    expect(answer).toMatchObject({ kind: "unavailable", reason: "it answered HTTP 503" });
    check((answer as { retryAfterMs: number }).retryAfterMs);
  });
});
