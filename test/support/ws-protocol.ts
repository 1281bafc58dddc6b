import WebSocket from "ws";
import { until } from "./webhooks";

/**
 * A bare graphql-transport-ws client over `ws`, for tests that open hundreds of sockets or must
 * control exactly when a socket closes (graphql-ws's own client retries and buffers on its own).
 */
export interface RawSubscriber {
  readonly socket: WebSocket;
  /** `data` of every `next` frame, in arrival order. */
  readonly received: Array<Record<string, any>>;
  readonly errors: unknown[];
  subscribe(id: string, query: string, variables: Record<string, unknown>): void;
  complete(id: string): void;
  readonly closed: Promise<number>;
  close(): void;
}

/** The text of a websocket message as `ws` hands it over (one buffer, fragments, or an ArrayBuffer). */
export function frameText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return (data instanceof ArrayBuffer ? Buffer.from(data) : data).toString("utf8");
}

export async function openSubscriber(url: string, authorization: string): Promise<RawSubscriber> {
  const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
  const received: Array<Record<string, any>> = [];
  const errors: unknown[] = [];
  const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
  socket.send(JSON.stringify({ type: "connection_init", payload: { authorization } }));
  await new Promise<void>((resolve, reject) => {
    socket.once("message", (data) =>
      JSON.parse(frameText(data)).type === "connection_ack"
        ? resolve()
        : reject(new Error(`expected connection_ack, got ${frameText(data)}`)),
    );
    void closed.then((code) => reject(new Error(`closed with ${code} before connection_ack`)));
  });
  socket.on("message", (data) => {
    const message = JSON.parse(frameText(data)) as {
      type: string;
      payload?: { data?: Record<string, any>; errors?: unknown };
    };
    if (message.type === "next" && message.payload?.data && !message.payload.errors)
      received.push(message.payload.data);
    else if (message.type === "next" || message.type === "error") errors.push(message.payload);
  });
  return {
    socket,
    received,
    errors,
    closed,
    subscribe: (id, query, variables) =>
      socket.send(JSON.stringify({ id, type: "subscribe", payload: { query, variables } })),
    complete: (id) => socket.send(JSON.stringify({ id, type: "complete" })),
    close: () => socket.close(1000),
  };
}

/** Reads one metric's value from the gateway's /metrics. */
export async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no metric ${name}`);
  return Number(line.split(" ")[1]);
}

/** How many live subscriptions the gateway at `url` runs now (the gateway_live_subscriptions gauge). */
export const liveSubscriptions = (url: string) => metric(url, "gateway_live_subscriptions");

/**
 * Resolves once the gateway at `url` runs at least `count` live subscriptions, instead of sleeping
 * until a subscribe message has probably arrived. A running subscription has joined its AWBs'
 * streams, and the read of the head it starts after was sent in the tick after the join, before
 * /metrics answered: it runs ahead of an ingestion sent after this resolves, which then reaches it.
 */
export function liveSubscriptionsRunning(url: string, count: number, what = `${count} live subscriptions running`) {
  return until(async () => (await liveSubscriptions(url)) >= count, { what });
}
