import { type Client, createClient } from "graphql-ws";
import WebSocket from "ws";
import type { App } from "../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { createPostgresDatabase } from "./support/postgres";
import { spawnServer } from "./support/process";
import { until } from "./support/webhooks";
import { liveSubscriptions, liveSubscriptionsRunning } from "./support/ws-protocol";
import { inFullSuite } from "./support/suite";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
let serial = 5_000_000;
const nextAwb = () => {
  const s = String(++serial);
  return `618-${s}${Number(s) % 7}`;
};

function connect(url: string, disposers: Disposers, authorization: string | undefined = `Bearer ${ADMIN_KEY}`): Client {
  const client = createClient({
    url: `${url.replace("http", "ws")}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: false,
    connectionParams: authorization === undefined ? {} : { authorization },
    onNonLazyError: () => {},
  });
  disposers.add(() => client.dispose());
  return client;
}

/** Subscribes and collects what arrives; `done` settles on error or completion. */
function watch(client: Client, query: string, variables: Record<string, unknown>) {
  const received: Array<Record<string, any>> = [];
  let failure: unknown;
  const done = new Promise<void>((resolve) => {
    client.subscribe(
      { query, variables },
      {
        next: (value) => {
          if (value.errors) failure = value.errors;
          else received.push(value.data as Record<string, any>);
        },
        error: (error) => {
          failure = error;
          resolve();
        },
        complete: () => resolve(),
      },
    );
  });
  return { received, done, failure: () => failure };
}

const AWB_QUERY = `subscription($awb: String!, $states: [StatusCode!], $after: String) { awbStatusChanged(awb: $awb, states: $states, after: $after) { eventId sequence awb state station timestamp toaTimestamp } }`;

describe.each(BEHAVIOUR_BACKENDS)("live milestones over graphql-ws on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    beforeAll(async () => {
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    });
    afterAll(() => disposers.disposeAll());
    const ingest = (body: unknown) => postJson(`${url}/carrier/handling/shipment/events`, body, admin);

    it("delivers a milestone to a subscriber of its AWB, after the commit, with its stored id", async () => {
      const awb = nextAwb();
      const running = await liveSubscriptions(url);
      const sub = watch(connect(url, disposers), AWB_QUERY, { awb: awb.replace("-", "") });
      await liveSubscriptionsRunning(url, running + 1);
      const res = await ingest({ awb, state: "DEP", station: "FRA" });
      await until(() => sub.received.length === 1, { what: "the live event" });
      expect(sub.received[0]!.awbStatusChanged).toMatchObject({
        eventId: res.body.events[0].eventId,
        awb,
        state: "DEP",
        station: "FRA",
        toaTimestamp: null,
      });
      expect(await app.database.prisma.statusEvent.count({ where: { id: res.body.events[0].eventId } })).toBe(1);
    });

    it("filters by states, and watches many AWBs with statusEvents", async () => {
      const [a, b, c] = [nextAwb(), nextAwb(), nextAwb()];
      const running = await liveSubscriptions(url);
      const arrOnly = watch(connect(url, disposers), AWB_QUERY, { awb: a, states: ["ARR"] });
      const many = watch(
        connect(url, disposers),
        `subscription($awbs: [String!]!) { statusEvents(awbs: $awbs) { awb state } }`,
        { awbs: [a, b] },
      );
      await liveSubscriptionsRunning(url, running + 2);
      await ingest([
        { awb: a, state: "DEP" },
        { awb: a, state: "ARR" },
        { awb: b, state: "RCF" },
        { awb: c, state: "DLV" },
      ]);
      // An AWB's events reach a subscriber in order: once ARR has, a's DEP before it was filtered out.
      await until(() => many.received.length === 3 && arrOnly.received.length === 1, { what: "filtered events" });
      expect(arrOnly.received.map((d) => d.awbStatusChanged.state)).toEqual(["ARR"]);
      expect(many.received.map((d) => `${d.statusEvents.awb} ${d.statusEvents.state}`).sort()).toEqual(
        [`${a} ARR`, `${a} DEP`, `${b} RCF`].sort(),
      );
    });

    it("replays what was stored after a sequence before going live (reconnect catch-up)", async () => {
      const awb = nextAwb();
      await ingest({ awb, state: "RCS" });
      const history = await postJson(
        `${url}/graphql`,
        { query: `query($a: String!) { milestones(awb: $a) { sequence } }`, variables: { a: awb } },
        admin,
      );
      const seen = history.body.data.milestones[0].sequence as string;
      await ingest([
        { awb, state: "MAN" },
        { awb, state: "DEP" },
      ]); // missed while "disconnected"
      const sub = watch(connect(url, disposers), AWB_QUERY, { awb, after: seen });
      await until(() => sub.received.length === 2, { what: "the catch-up" });
      await ingest({ awb, state: "ARR" });
      await until(() => sub.received.length === 3, { what: "the live event after catch-up" });
      expect(sub.received.map((d) => d.awbStatusChanged.state)).toEqual(["MAN", "DEP", "ARR"]);
    });

    it("closes a socket without a valid key with 4401, and one without events:read with 4403", async () => {
      const closed = (authorization: string | undefined) =>
        new Promise<number>((resolve) => {
          const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
          socket.on("open", () =>
            socket.send(JSON.stringify({ type: "connection_init", payload: authorization ? { authorization } : {} })),
          );
          socket.on("close", (code) => resolve(code));
        });
      expect(await closed(undefined)).toBe(4401);
      expect(await closed("Bearer cgw_not-a-real-key-at-all-000")).toBe(4401);
      const { clientId } = await app.services.clients.createClient({ name: "subs only", callbackPrefixes: ["*"] });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      expect(await closed(`Bearer ${key}`)).toBe(4403);
    });

    it("closes the sockets of a revoked key", async () => {
      const { clientId } = await app.services.clients.createClient({ name: "dashboard", callbackPrefixes: ["*"] });
      const { key, keyId } = await app.services.clients.issueKey(clientId, ["events:read"]);
      const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
      const closedWith = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
      await new Promise((resolve) => socket.on("open", resolve));
      socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${key}` } }));
      await new Promise((resolve) => socket.once("message", resolve)); // connection_ack
      await app.services.clients.revokeKey(keyId);
      expect(await closedWith).toBe(4401);
    }, 20_000);

    it("answers a malformed subscription with the contract's error code", async () => {
      const sub = watch(connect(url, disposers), AWB_QUERY, { awb: "not-an-awb" });
      await sub.done;
      expect(JSON.stringify(sub.failure())).toContain("VALIDATION_FAILED");
    });
  });
});

describe("a slow websocket consumer", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("is dropped once it leaves a keep-alive ping unanswered, pinged every LIVE_KEEP_ALIVE_MS", async () => {
    // An app of its own, stopped at the end: the next test's flood runs without it.
    const own = new Disposers();
    const { url } = await startApp("pglite", own, { LIVE_KEEP_ALIVE_MS: "1000" });
    const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    await new Promise((resolve) => socket.on("open", resolve));
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${ADMIN_KEY}` } }));
    await new Promise((resolve) => socket.once("message", resolve));
    const socketsOpen = async () =>
      Number(/^gateway_live_sockets (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
    expect(await socketsOpen()).toBe(1);
    // A client that reads nothing answers no ping (nor sees the server end it: the server's gauge
    // says). Dropped after one to two periods; at the default 12 s it would outlast this wait.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    const deadline = Date.now() + 10_000;
    while ((await socketsOpen()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const left = await socketsOpen();
    socket.terminate();
    await own.disposeAll();
    expect(left).toBe(0);
  }, 30_000);

  it("is closed with 4429 instead of buffering without bound", async () => {
    // The kernel's buffers take about 17,000 frames first (8 s of ingestion here, three times that on a
    // loaded machine): the keep-alive, which drops a socket that leaves a ping unanswered, waits longer.
    const { url } = await startApp("pglite", disposers, {
      RATE_LIMIT_PER_SECOND: "0",
      LIVE_MAX_QUEUED_EVENTS: "2000",
      LIVE_KEEP_ALIVE_MS: "300000",
    });
    const awb = nextAwb();
    const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    const closedWith = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
    await new Promise((resolve) => socket.on("open", resolve));
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${ADMIN_KEY}` } }));
    await new Promise((resolve) => socket.once("message", resolve));
    socket.send(
      JSON.stringify({
        id: "1",
        type: "subscribe",
        payload: {
          query: `subscription($a: String!) { awbStatusChanged(awb: $a) { eventId sequence awb state timestamp receivedAt station flight } }`,
          variables: { a: awb },
        },
      }),
    );
    await liveSubscriptionsRunning(url, 1);
    // Stop reading: the kernel buffers fill, then the server's send buffer grows.
    (socket as unknown as { _socket: { pause(): void } })._socket.pause();
    // A paused client cannot read the close frame: the server's gauge says when it gave the feed up,
    // and posting stops then.
    const subscriptionsRunning = async () =>
      Number(/^gateway_live_subscriptions (\d+)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1]);
    expect(await subscriptionsRunning()).toBe(1);
    for (let batch = 0; batch < 60 && (await subscriptionsRunning()) > 0; batch++) {
      const events = Array.from({ length: 1000 }, (_, i) => ({
        eventId: `slow-${batch}-${i}`,
        awb,
        state: "DEP",
        station: "FRA",
        flight: "LH8160",
      }));
      expect((await postJson(`${url}/carrier/handling/shipment/events`, events, admin)).status).toBe(202);
    }
    (socket as unknown as { _socket: { resume(): void } })._socket.resume();
    expect(await closedWith).toBe(4429);
  }, 120_000);
});

inFullSuite(describeBackend("postgres"))("live milestones across instances (PostgreSQL + Redis)", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("delivers an event ingested on one server to a subscriber on another", async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: "redis://127.0.0.1:6379",
      BOOTSTRAP_API_KEY: ADMIN_KEY,
      RATE_LIMIT_PER_SECOND: "0",
    };
    const one = await spawnServer(env);
    disposers.add(async () => {
      one.child.kill("SIGTERM");
      await one.exited;
    });
    const two = await spawnServer(env);
    disposers.add(async () => {
      two.child.kill("SIGTERM");
      await two.exited;
    });
    const awb = nextAwb();
    const sub = watch(connect(two.url, disposers), AWB_QUERY, { awb });
    await liveSubscriptionsRunning(two.url, 1);
    const res = await postJson(
      `${one.url}/carrier/handling/shipment/events`,
      { awb, state: "TOA", toaTimestamp: "2026-11-22T05:00:00Z" },
      admin,
    );
    expect(res.status).toBe(202);
    await until(() => sub.received.length === 1, { what: "the event through Redis" });
    expect(sub.received[0]!.awbStatusChanged).toMatchObject({
      awb,
      state: "TOA",
      toaTimestamp: "2026-11-22T05:00:00.000Z",
      eventId: res.body.events[0].eventId,
    });
  }, 60_000);
});
