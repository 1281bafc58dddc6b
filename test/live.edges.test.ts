/**
 * Review fixes in src/live: a resume position the stream has not reached yet but the database has, a
 * Redis publisher down while the subscriber is up (and a subscriber "ready" before it is subscribed),
 * one shared operation per query text however many other documents came in between, the GraphQL time
 * limit on websocket queries, and events dropped while a stream's head was still being read.
 */
import Redis from "ioredis";
import type { App } from "../src/app";
import { createAwbStreams } from "../src/live/awb-streams";
import { createLiveEvents, type LiveEvents, type LiveMilestone } from "../src/live/live-events";
import { createMilestoneService } from "../src/milestones/milestone.service";
import { ADMIN_KEY, Disposers, silentLogger, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { type PrivateService, startPrivateRedis } from "./support/private-services";
import { until } from "./support/webhooks";
import { metric, openSubscriber } from "./support/ws-protocol";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const AWB_QUERY = `subscription($awb: String!, $after: String) { awbStatusChanged(awb: $awb, after: $after) { eventId sequence awb state } }`;
const STATION_EVERYTHING = `code name countryShort countryLong timeZone freighterHandling passengerAircraftHandling truckHandling
  import { address { street city } contact { generalPhone } openingHours { day hours { open close } } ciscFee storage }
  export { address { street city } openingHours { day hours { open close } } }
  temperatureProducts { active { available temperatureRanges { min max } services } passive { available } }`;
let serial = 7_000_000;
const nextAwb = () => {
  const s = String(++serial);
  return `176-${s}${Number(s) % 7}`;
};

const milestone = (awb: string, position: number, eventId = `${awb}-${position}`): LiveMilestone => ({
  eventId,
  clientEventId: null,
  sequence: String(position),
  awb,
  state: "RCS",
  timestamp: "2026-11-21T10:00:00.000Z",
  toaTimestamp: null,
  receivedAt: "2026-11-21T10:00:01.000Z",
  station: null,
  flight: null,
});

describe("an AWB stream whose head read is slow", () => {
  it("delivers every event in order when more than 10,000 arrive before its head is known", async () => {
    expect.assertions(2);
    const awb = "176-00000001";
    const TOTAL = 10_050;
    const stored = Array.from({ length: TOTAL }, (_, i) => milestone(awb, i + 1));
    let releaseHead!: () => void;
    const headRead = new Promise<void>((resolve) => (releaseHead = resolve));
    const live = createLiveEvents({ redisUrl: undefined, log: silentLogger });
    const streams = createAwbStreams({
      live,
      store: {
        heads: async (awbs) => {
          await headRead;
          return new Map(awbs.map((a) => [a, 0n]));
        },
        after: async (_awb, position, limit) => stored.slice(position, position + limit),
        prunedThrough: async () => 0,
      },
      log: silentLogger,
    });
    const got: number[] = [];
    const started: number[] = [];
    const leave = streams.join(awb, {
      started: (head) => void started.push(head),
      next: (_event, position) => void got.push(position),
    });
    try {
      for (const event of stored) live.publish([event]);
      releaseHead();
      await until(() => got.length >= TOTAL, { what: `all ${TOTAL} events`, timeoutMs: 10_000 });
      expect(started).toEqual([0]);
      expect(got).toEqual(Array.from({ length: TOTAL }, (_, i) => i + 1));
    } finally {
      leave();
      streams.close();
    }
  });
});

describe("live subscriptions over the gateway (pglite)", () => {
  const disposers = new Disposers();
  let app: App;
  let url: string;
  beforeAll(async () => {
    ({ app, url } = await startApp("pglite", disposers, {
      RATE_LIMIT_PER_SECOND: "0",
      LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET: "1000",
    }));
  }, 180_000);
  afterAll(() => disposers.disposeAll());
  const ingest = (body: unknown) => postJson(`${url}/carrier/handling/shipment/events`, body, admin);

  it("accepts a resume position the database has but this stream has not handed out yet, and continues from it", async () => {
    expect.assertions(4);
    const awb = nextAwb();
    const running = await metric(url, "gateway_live_subscriptions");
    await ingest([
      { awb, state: "RCS" },
      { awb, state: "MAN" },
    ]);
    const first = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => first.close());
    first.subscribe("1", AWB_QUERY, { awb, after: "2" });
    await ingest({ awb, state: "DEP" });
    // The stream has handed out 3.
    await until(() => first.received.length === 1, { what: "the first subscriber's event 3" });
    // Event 4 is committed, but its publish is lost (stored by a service that publishes nothing).
    const quiet = createMilestoneService({ prisma: app.database.prisma, onCommitted: () => {} });
    await quiet.ingest([
      {
        eventId: `quiet-${awb}`,
        awb,
        state: "ARR",
        occurredAt: new Date(),
        toaTimestamp: null,
        station: null,
        flight: null,
      },
    ]);
    // A dashboard read the history (4 events) and resumes after 4.
    const second = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => second.close());
    second.subscribe("1", AWB_QUERY, { awb, after: "4" });
    await until(
      async () => second.errors.length > 0 || (await metric(url, "gateway_live_subscriptions")) === running + 2,
      {
        what: "the second subscription running or refused",
      },
    );
    expect(second.errors).toEqual([]);
    await ingest({ awb, state: "RCF" });
    await until(() => second.received.length >= 1 && first.received.length >= 3, { what: "event 5 on both" });
    expect(second.received.map((d) => d.awbStatusChanged.sequence)).toEqual(["5"]);
    expect(first.received.map((d) => d.awbStatusChanged.sequence)).toEqual(["3", "4", "5"]);
    expect(second.errors).toEqual([]);
    first.close();
    second.close();
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running, { what: "both released" });
  }, 120_000);

  it("runs one operation per id when a client completes an id and sends it again at once, and releases it on close", async () => {
    const awb = nextAwb();
    const running = await metric(url, "gateway_live_subscriptions");
    const client = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => client.close());
    const frames: Array<{ id?: string; type: string }> = [];
    client.socket.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
    // One burst: the first subscribe is still being set up when its id is completed and reused.
    client.subscribe("a", AWB_QUERY, { awb });
    client.complete("a");
    client.subscribe("a", AWB_QUERY, { awb });
    // A query completed while it runs, then its id reused by a subscription: only the subscription answers.
    client.subscribe("b", `{ stationCodes }`, {});
    client.complete("b");
    client.subscribe("b", AWB_QUERY, { awb });
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running + 2, {
      what: "two subscriptions running",
    });
    await ingest({ awb, state: "RCS" });
    await until(() => client.received.length >= 2, { what: "the event on both ids" });
    await ingest({ awb, state: "MAN" });
    await until(() => client.received.length >= 4, { what: "the second event on both ids" });
    await new Promise((resolve) => setTimeout(resolve, 200)); // room for a duplicate or a late answer to arrive
    expect(frames.map((f) => `${f.id} ${f.type}`).sort()).toEqual(["a next", "a next", "b next", "b next"]);
    expect(await metric(url, "gateway_live_subscriptions")).toBe(running + 2);
    client.close();
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running, {
      what: "both released on close",
    });
  }, 60_000);

  it("shares one operation per query text, even after more than 500 other documents came in between", async () => {
    expect.assertions(3);
    const awb = nextAwb();
    const running = await metric(url, "gateway_live_subscriptions");
    const first = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => first.close());
    // Both resume after 0: they get the event whether or not the stream had read its head when it came.
    first.subscribe("1", AWB_QUERY, { awb, after: "0" });
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running + 1, {
      what: "the first running",
    });
    const others = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => others.close());
    const OTHERS = 520;
    for (let i = 0; i < OTHERS; i++) others.subscribe(`q${i}`, `query Other${i} { __typename }`, {});
    await until(() => others.received.length + others.errors.length === OTHERS, { what: "every other document" });
    const second = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => second.close());
    second.subscribe("1", AWB_QUERY, { awb, after: "0" });
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running + 2, {
      what: "the second running",
    });
    const before = await metric(url, "gateway_live_executions_total");
    await ingest({ awb, state: "DEP" });
    await until(() => first.received.length === 1 && second.received.length === 1, { what: "the event on both" });
    expect(await metric(url, "gateway_live_executions_total")).toBe(before + 1);
    expect(second.received).toEqual(first.received);
    expect(others.errors).toEqual([]);
    for (const s of [first, second, others]) s.close();
    await until(async () => (await metric(url, "gateway_live_subscriptions")) === running, { what: "both released" });
  }, 120_000);
});

describe("the GraphQL time limit over the websocket", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("stops a slow query over the socket with the same OPERATION_TIMED_OUT answer as over HTTP", async () => {
    expect.assertions(4);
    const { url } = await startApp("pglite", disposers, {
      GRAPHQL_TIME_LIMIT_MS: "1",
      GRAPHQL_RESPONSE_CACHE: "false",
    });
    const query = `{ stations { ${STATION_EVERYTHING} } }`;
    // With a key, as the socket has one: without, reading every station's every field is refused as too costly.
    const overHttp = await postJson(`${url}/graphql`, { query }, { authorization: `Bearer ${ADMIN_KEY}` });
    expect(overHttp.status).toBe(503);
    expect(overHttp.body).toEqual({
      errors: [
        { message: "The operation ran longer than its 1 ms limit", extensions: { code: "OPERATION_TIMED_OUT" } },
      ],
    });
    const socket = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => socket.close());
    socket.subscribe("q", query, {});
    await until(() => socket.received.length + socket.errors.length > 0, { what: "the answer over the socket" });
    expect(socket.received).toEqual([]);
    expect(socket.errors).toEqual([overHttp.body]);
    socket.close();
  }, 180_000);
});

describe("live events over a real Redis when one of its connections fails", () => {
  const CHANNEL = "cgw:milestones";
  let redis: PrivateService;
  let control: Redis;
  let live: LiveEvents;
  const got: string[] = [];
  let reconnects = 0;
  const count = (eventId: string) => got.filter((id) => id === eventId).length;
  const subscribedServerSide = async () =>
    ((await control.pubsub("NUMSUB", CHANNEL)) as [string, number])[1] >= 1 && live.redisStatus() === "up";

  beforeAll(async () => {
    redis = await startPrivateRedis();
    control = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    live = createLiveEvents({ redisUrl: redis.url, log: silentLogger });
    live.listen((batch) => got.push(...batch.map((e) => e.eventId)));
    live.onReconnect(() => reconnects++);
    await until(subscribedServerSide, { what: "the live subscriber subscribed" });
  });
  afterEach(async () => {
    // Whatever a test left behind: the default user enabled, on every channel.
    await control.call("ACL", "SETUSER", "default", "on", "allchannels");
  });
  afterAll(async () => {
    await live?.close();
    control?.disconnect();
    await redis?.dispose();
  });

  it("serves this instance's subscribers when the publisher is down while the subscriber stays up, and once each when it is back", async () => {
    expect.assertions(6);
    live.publish([milestone("176-00000012", 1, "healthy")]);
    await until(() => count("healthy") === 1, { what: "the echo while healthy" });
    // New connections are refused (existing ones keep working); then the publisher's is closed.
    await control.call("ACL", "SETUSER", "default", "off");
    await control.client("KILL", "TYPE", "normal", "SKIPME", "yes");
    await until(() => live.redisStatus() === "down", { what: "the publisher down" });
    expect(((await control.pubsub("NUMSUB", CHANNEL)) as [string, number])[1]).toBe(1); // the subscriber is up
    live.publish([milestone("176-00000012", 2, "publisher-down")]);
    await until(() => count("publisher-down") > 0, { what: "the event within this instance", timeoutMs: 5_000 });
    await control.call("ACL", "SETUSER", "default", "on");
    await until(() => live.redisStatus() === "up", { what: "the publisher back" });
    live.publish([milestone("176-00000012", 3, "back")]);
    live.publish([milestone("176-00000012", 4, "marker")]);
    // The marker follows "back" on the same connections: once it is here, "back" has arrived as often as it will.
    await until(() => count("marker") === 1, { what: "the marker" });
    expect(count("healthy")).toBe(1);
    expect(count("publisher-down")).toBe(1);
    expect(count("back")).toBe(1);
    expect(count("marker")).toBe(1);
    expect(live.redisStatus()).toBe("up");
  }, 30_000);

  it("counts Redis as back, and resyncs, only once the subscription is live again, not when the connection is ready", async () => {
    expect.assertions(7);
    await until(subscribedServerSide, { what: "subscribed" });
    const reconnectsBefore = reconnects;
    // Subscribing is refused from now on; Redis closes the subscriber's connection (and it is killed here in case not).
    await control.call("ACL", "SETUSER", "default", "resetchannels");
    await control.client("KILL", "TYPE", "pubsub");
    // The subscriber has reconnected (it is "ready") and its SUBSCRIBE was refused.
    await until(
      async () =>
        String(await control.client("LIST"))
          .split("\n")
          .some((line) => / flags=N /.test(line) && / cmd=subscribe /.test(line)),
      { what: "a refused re-subscribe" },
    );
    expect(live.redisStatus()).toBe("down");
    expect(reconnects).toBe(reconnectsBefore);
    live.publish([milestone("176-00000013", 1, "not-subscribed")]);
    await until(() => count("not-subscribed") > 0, { what: "the event within this instance", timeoutMs: 5_000 });
    await control.call("ACL", "SETUSER", "default", "allchannels");
    await until(subscribedServerSide, { what: "subscribed again" });
    expect(reconnects).toBe(reconnectsBefore + 1);
    live.publish([milestone("176-00000013", 2, "resubscribed")]);
    live.publish([milestone("176-00000013", 3, "marker-2")]);
    await until(() => count("marker-2") === 1, { what: "the marker" });
    expect(count("not-subscribed")).toBe(1);
    expect(count("resubscribed")).toBe(1);
    expect(count("marker-2")).toBe(1);
    expect(live.redisStatus()).toBe("up");
  }, 30_000);
});
