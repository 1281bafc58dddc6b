import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { CloseCode, GRAPHQL_TRANSPORT_WS_PROTOCOL } from "graphql-ws";
import WebSocket, { WebSocketServer } from "ws";
import { createProtocol, holds, newSocketState, type ProtocolHooks, sendFrame } from "../src/live/graphql-ws-protocol";

/**
 * The graphql-transport-ws protocol core (live/graphql-ws-protocol.ts) over real sockets, with hooks
 * that stand for the gateway's: what graphql-ws's own server did, close code by close code.
 */
describe("the graphql-transport-ws protocol core", () => {
  let wss: WebSocketServer;
  let url: string;
  let admit = true;
  /** What each `subscribe` hook saw while it ran: whether its id was reserved. */
  const subscribed: Array<{ id: string; reserved: boolean }> = [];
  let releaseSubscribe: (() => void) | undefined;
  const clients: WebSocket[] = [];

  const hooks: ProtocolHooks = {
    connect: async () => {
      await Promise.resolve();
      return admit;
    },
    subscribe: async (socket, state, reservation) => {
      const id = reservation.id;
      subscribed.push({ id, reserved: holds(state, reservation) });
      // "hold" ids wait for the test to let them go, so that a second subscribe meets a running one.
      if (id.startsWith("hold")) await new Promise<void>((resolve) => (releaseSubscribe = resolve));
      sendFrame(socket, JSON.stringify({ id, type: "complete" }));
    },
  };

  beforeAll(async () => {
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(wss, "listening");
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    const protocol = createProtocol(hooks, { connectionInitWaitTimeoutMs: 200 });
    wss.on("connection", (socket) => {
      const state = newSocketState(undefined);
      socket.on("message", (data: Buffer) => void protocol.message(socket, state, data.toString("utf8")));
      socket.on("close", () => protocol.closed(state));
      protocol.opened(socket, state);
    });
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  afterEach(() => {
    admit = true;
    subscribed.length = 0;
    releaseSubscribe?.();
    releaseSubscribe = undefined;
    for (const client of clients.splice(0)) client.terminate();
  });

  async function connect(subprotocol = GRAPHQL_TRANSPORT_WS_PROTOCOL) {
    const client = new WebSocket(url, subprotocol);
    clients.push(client);
    const frames: any[] = [];
    client.on("message", (data: Buffer) => frames.push(JSON.parse(data.toString("utf8"))));
    const closed = once(client, "close").then(([code, reason]) => ({ code, reason: String(reason) }));
    await once(client, "open");
    const nextFrame = async () => {
      while (frames.length === 0) await once(client, "message");
      return frames.shift();
    };
    return { client, frames, nextFrame, closed, send: (frame: unknown) => client.send(JSON.stringify(frame)) };
  }

  async function acknowledged() {
    const socket = await connect();
    socket.send({ type: "connection_init" });
    expect(await socket.nextFrame()).toEqual({ type: "connection_ack" });
    return socket;
  }

  it("acknowledges connection_init, answers ping with pong (echoing its payload) and ignores pong", async () => {
    const { send, nextFrame } = await acknowledged();
    send({ type: "pong" });
    send({ type: "ping", payload: { at: 1 } });
    expect(await nextFrame()).toEqual({ type: "pong", payload: { at: 1 } });
    send({ type: "ping" });
    expect(await nextFrame()).toEqual({ type: "pong" });
  });

  it("refuses another subprotocol with 4406", async () => {
    const { send, closed } = await connect("graphql-ws");
    send({ type: "connection_init" });
    expect(await closed).toEqual({ code: CloseCode.SubprotocolNotAcceptable, reason: "Subprotocol not acceptable" });
  });

  it("closes with 4408 when connection_init does not come in time, and not once it came", async () => {
    const late = await connect();
    const early = await acknowledged();
    expect((await late.closed).code).toBe(CloseCode.ConnectionInitialisationTimeout);
    early.send({ type: "ping" });
    expect(await early.nextFrame()).toEqual({ type: "pong" });
    expect(early.client.readyState).toBe(WebSocket.OPEN);
  });

  it("closes with 4429 on a second connection_init and 4403 when the connect hook refuses", async () => {
    const twice = await acknowledged();
    twice.send({ type: "connection_init" });
    expect((await twice.closed).code).toBe(CloseCode.TooManyInitialisationRequests);
    admit = false;
    const refused = await connect();
    refused.send({ type: "connection_init" });
    expect(await refused.closed).toEqual({ code: CloseCode.Forbidden, reason: "Forbidden" });
  });

  it("closes with 4401 on a subscribe before the acknowledgement and 4400 on a malformed message", async () => {
    const early = await connect();
    early.send({ id: "1", type: "subscribe", payload: { query: "{ a }" } });
    expect((await early.closed).code).toBe(CloseCode.Unauthorized);
    expect(subscribed).toEqual([]);
    const malformed = await acknowledged();
    malformed.client.send("{not json");
    expect((await malformed.closed).code).toBe(CloseCode.BadRequest);
  });

  it("reserves a subscribe's id while it runs, closes with 4409 on the same id meanwhile, and frees it after", async () => {
    const { send, nextFrame, closed } = await acknowledged();
    send({ id: "again", type: "subscribe", payload: { query: "{ a }" } });
    expect(await nextFrame()).toEqual({ id: "again", type: "complete" });
    send({ id: "again", type: "subscribe", payload: { query: "{ a }" } });
    expect(await nextFrame()).toEqual({ id: "again", type: "complete" });
    send({ id: "hold-1", type: "subscribe", payload: { query: "{ a }" } });
    while (subscribed.length < 3) await new Promise((resolve) => setImmediate(resolve));
    send({ id: "hold-1", type: "subscribe", payload: { query: "{ a }" } });
    expect(await closed).toEqual({
      code: CloseCode.SubscriberAlreadyExists,
      reason: "Subscriber for hold-1 already exists",
    });
    expect(subscribed).toEqual([
      { id: "again", reserved: true },
      { id: "again", reserved: true },
      { id: "hold-1", reserved: true },
    ]);
  });

  it("keeps the 4409 close reason within 123 bytes however long the id", async () => {
    const { send, closed } = await acknowledged();
    const id = `hold-${"é".repeat(200)}`;
    send({ id, type: "subscribe", payload: { query: "{ a }" } });
    while (subscribed.length < 1) await new Promise((resolve) => setImmediate(resolve));
    send({ id, type: "subscribe", payload: { query: "{ a }" } });
    const { code, reason } = await closed;
    expect(code).toBe(CloseCode.SubscriberAlreadyExists);
    expect(Buffer.byteLength(reason)).toBeLessThanOrEqual(123);
    expect(reason).toMatch(/^Subscriber for hold-é+…$/);
  });
});
