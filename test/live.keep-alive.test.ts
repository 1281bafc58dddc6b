import { once } from "node:events";
import type { AddressInfo } from "node:net";
import WebSocket, { WebSocketServer } from "ws";
import { startKeepAlive } from "../src/live/keep-alive";

const PERIOD_MS = 1_000;

/** Only the keep-alive's interval is faked: the sockets' I/O and ws's own timeouts run for real. */
const REAL_TIMERS = [
  "Date",
  "hrtime",
  "nextTick",
  "performance",
  "queueMicrotask",
  "setImmediate",
  "clearImmediate",
  "setTimeout",
  "clearTimeout",
] as const;

describe("the websocket keep-alive", () => {
  let wss: WebSocketServer;
  let url: string;
  const clients: WebSocket[] = [];

  beforeAll(async () => {
    wss = new WebSocketServer({ host: "127.0.0.1", port: 0 });
    await once(wss, "listening");
    url = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  });
  beforeEach(() => jest.useFakeTimers({ doNotFake: [...REAL_TIMERS] }));
  afterEach(() => {
    for (const client of clients.splice(0)) client.terminate();
    jest.useRealTimers();
  });

  /** A connected pair: the server's end of the socket and the client's. */
  async function connect(options: { autoPong: boolean }): Promise<{ server: WebSocket; client: WebSocket }> {
    const accepted = once(wss, "connection") as Promise<[WebSocket]>;
    const client = new WebSocket(url, options);
    clients.push(client);
    await once(client, "open");
    return { server: (await accepted)[0], client };
  }

  it("pings every watched socket once a period and keeps the ones that answer", async () => {
    const keepAlive = startKeepAlive(PERIOD_MS);
    const { server, client } = await connect({ autoPong: true });
    keepAlive.watch(server);
    for (let period = 0; period < 3; period++) {
      const pinged = once(client, "ping");
      const answered = once(server, "pong");
      jest.advanceTimersByTime(PERIOD_MS);
      await Promise.all([pinged, answered]);
    }
    expect(server.readyState).toBe(WebSocket.OPEN);
    expect(keepAlive.size).toBe(1);
    keepAlive.stop();
  });

  it("drops a socket that did not answer the previous ping, and forgets it once closed", async () => {
    const keepAlive = startKeepAlive(PERIOD_MS);
    const { server, client } = await connect({ autoPong: false });
    keepAlive.watch(server);
    const pinged = once(client, "ping");
    jest.advanceTimersByTime(PERIOD_MS);
    await pinged;
    const serverClosed = once(server, "close");
    jest.advanceTimersByTime(PERIOD_MS);
    const [code] = (await once(client, "close")) as [number];
    expect(code).toBe(1006); // terminated: no close frame
    await serverClosed;
    expect(keepAlive.size).toBe(0);
    keepAlive.stop();
  });

  it("forgets a socket that closes on its own, and stop clears its timer", async () => {
    const keepAlive = startKeepAlive(PERIOD_MS);
    const { server, client } = await connect({ autoPong: true });
    keepAlive.watch(server);
    const serverClosed = once(server, "close");
    client.close();
    await serverClosed;
    expect(keepAlive.size).toBe(0);
    expect(jest.getTimerCount()).toBe(1);
    keepAlive.stop();
    expect(jest.getTimerCount()).toBe(0);
  });
});
