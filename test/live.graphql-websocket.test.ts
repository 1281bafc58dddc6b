import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { buildSchema } from "graphql";
import pino from "pino";
import WebSocket from "ws";
import type { GraphQLContext } from "../src/graphql-core/context";
import { createGraphQLPolicy } from "../src/graphql-core/policy";
import { createAwbStreams } from "../src/live/awb-streams";
import { createConnectionCap } from "../src/live/connection-cap";
import { attachGraphQLWebsocket, type GraphQLWebsocket } from "../src/live/graphql-websocket";
import type { KeyVerdict } from "../src/live/key-recheck";
import { createLiveEvents } from "../src/live/live-events";
import { frameText } from "./support/ws-protocol";
import { until } from "./support/webhooks";

// The adapter and its protocol core on a plain HTTP server, with a one-field schema: no database.
const log = pino({ level: "silent" });
const schema = buildSchema(`type Query { hello: String } type Subscription { never: String }`);
schema.getQueryType()!.getFields().hello!.resolve = () => "world";
const policy = createGraphQLPolicy({
  graphqlIntrospection: false,
  graphqlOperationsFile: undefined,
  graphqlLimits: {
    maxDepth: 12,
    maxCost: 300_000,
    maxAliases: 30,
    maxListArgument: 1_000,
    maxBatch: 1,
    timeLimitMs: 0,
    maxTokens: 1_000,
  },
});
const REVOKED: KeyVerdict = { ok: false, code: 4401, reason: "The API key was revoked" };

describe("the graphql-ws adapter", () => {
  let httpServer: Server;
  let websocket: GraphQLWebsocket;
  let url: string;
  let revoked: boolean;
  let stopStreams: () => void;
  const sockets: WebSocket[] = [];

  beforeEach(async () => {
    revoked = false;
    httpServer = createServer((_request, response) => response.writeHead(404).end());
    httpServer.listen(0, "127.0.0.1");
    await once(httpServer, "listening");
    url = `ws://127.0.0.1:${(httpServer.address() as AddressInfo).port}`;
    const streams = createAwbStreams({
      live: createLiveEvents({ redisUrl: undefined, log }),
      // An empty store: no operation here reads one.
      store: { heads: async () => new Map(), after: async () => [], prunedThrough: async () => 0 },
      log,
    });
    stopStreams = () => streams.close();
    websocket = attachGraphQLWebsocket({
      httpServer,
      schema,
      policy,
      log,
      createContext: (socket, _params, subscriptionId) =>
        ({ websocket: { socket, subscriptionId } }) as unknown as GraphQLContext,
      authorize: async (authorization) =>
        authorization === "Bearer good" ? { ok: true, keyId: "key" } : { ok: false, code: 4401, reason: "Who?" },
      addressOf: (request) => request.socket.remoteAddress,
      recheck: async () => (revoked ? REVOKED : "valid"),
      recheckMs: 20,
      keepAliveMs: 12_000,
      live: { streams, readAfter: async () => [], maxQueuedEvents: 100 },
      limits: {
        connections: createConnectionCap({ max: 1 }),
        maxSubscriptionsPerSocket: 5,
        takeMessageToken: () => {},
      },
    });
  });
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    await websocket.dispose();
    stopStreams();
    await new Promise<void>((resolve) => httpServer.close(() => resolve()));
  });

  /** A socket at /graphql with its close code and the frames it received. */
  async function open(path = "/graphql") {
    const socket = new WebSocket(`${url}${path}`, "graphql-transport-ws");
    sockets.push(socket);
    const frames: Array<Record<string, unknown>> = [];
    let waiting: { count: number; resolve: () => void } | undefined;
    socket.on("message", (data) => {
      frames.push(JSON.parse(frameText(data)) as Record<string, unknown>);
      if (waiting && frames.length >= waiting.count) waiting.resolve();
    });
    /** Resolves once `count` frames have arrived. */
    const received = (count: number) =>
      frames.length >= count ? Promise.resolve() : new Promise<void>((resolve) => (waiting = { count, resolve }));
    const closed = once(socket, "close").then(([code, reason]) => ({
      code: code as number,
      reason: String(reason),
    }));
    await once(socket, "open");
    return { socket, frames, received, closed };
  }

  async function connected(authorization = "Bearer good") {
    const opened = await open();
    opened.socket.send(JSON.stringify({ type: "connection_init", payload: { authorization } }));
    await Promise.race([opened.received(1), opened.closed]);
    return opened;
  }

  it("acknowledges an authorised key, answers its query, and closes with the verdict's code for a refused one", async () => {
    const { socket, frames, received } = await connected();
    expect(frames).toEqual([{ type: "connection_ack" }]);
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: "{ hello }" } }));
    await received(3);
    expect(frames.slice(1)).toEqual([
      { id: "1", type: "next", payload: { data: { hello: "world" } } },
      { id: "1", type: "complete" },
    ]);

    const refused = await connected("Bearer bad");
    expect(await refused.closed).toEqual({ code: 4401, reason: "Who?" });
  });

  it("refuses a key's socket past its cap with 4429 and gives the slot back when a socket closes", async () => {
    const first = await connected();
    const second = await connected();
    expect(await second.closed).toEqual({
      code: 4429,
      reason: "This API key already has 1 open websockets (at most 1)",
    });
    first.socket.close();
    await until(() => websocket.socketCount() === 0); // the server's close handler gives the slot back
    const third = await connected();
    expect(third.frames).toEqual([{ type: "connection_ack" }]);
  });

  it("closes a key's sockets at the first re-check after it is revoked", async () => {
    const { closed } = await connected();
    revoked = true;
    expect(await closed).toEqual({ code: 4401, reason: "The API key was revoked" });
  });

  it("closes with 4400 a client that sends a server-only message", async () => {
    const { socket, closed } = await connected();
    socket.send(JSON.stringify({ id: "1", type: "next", payload: {} }));
    expect((await closed).code).toBe(4400);
  });

  it("answers an upgrade elsewhere with 404, and on dispose closes every socket (1001) and answers upgrades with 503", async () => {
    const elsewhere = new WebSocket(`${url}/other`, "graphql-transport-ws");
    const [, notFound] = (await once(elsewhere, "unexpected-response")) as [unknown, { statusCode: number }];
    expect(notFound.statusCode).toBe(404);

    const { closed } = await connected();
    const disposed = websocket.dispose();
    expect((await closed).code).toBe(1001);
    await disposed;
    const late = new WebSocket(`${url}/graphql`, "graphql-transport-ws");
    const [, unavailable] = (await once(late, "unexpected-response")) as [unknown, { statusCode: number }];
    expect(unavailable.statusCode).toBe(503);
    expect(websocket.socketCount()).toBe(0);
  });
});
