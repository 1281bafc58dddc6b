// The baseline for bench:live: a bare `ws` server speaking as much of graphql-transport-ws as its
// clients need (connection_init is acknowledged; each subscribe is kept as its id and its variables,
// which a server must hold to address and filter frames) and, on POST /broadcast, sending one
// pre-serialised frame to every connected socket. Prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/** Per socket: its subscriptions, by id. */
const subscriptions = new Map<WebSocket, Map<string, unknown>>();

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(404).end();
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    for (const socket of wss.clients) socket.send(body);
    res.writeHead(204).end();
  });
});
const wss = new WebSocketServer({ server, handleProtocols: (protocols) => protocols.values().next().value ?? false });
wss.on("connection", (socket) => {
  const mine = new Map<string, unknown>();
  subscriptions.set(socket, mine);
  socket.on("message", (data: Buffer) => {
    const message = JSON.parse(data.toString()) as { type: string; id?: string; payload?: { variables?: unknown } };
    if (message.type === "connection_init") socket.send(JSON.stringify({ type: "connection_ack" }));
    else if (message.type === "subscribe" && message.id !== undefined) mine.set(message.id, message.payload?.variables);
    else if (message.type === "complete" && message.id !== undefined) mine.delete(message.id);
  });
  socket.once("close", () => subscriptions.delete(socket));
});
server.listen(0, "127.0.0.1", () => {
  console.log(
    JSON.stringify({ msg: "baseline listening", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
  );
});
