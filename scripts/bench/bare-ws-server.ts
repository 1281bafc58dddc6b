// The baseline for bench:live: a bare `ws` server that, on POST /broadcast, sends one pre-serialised
// frame to every connected socket. Prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { WebSocketServer } from "ws";

const server = http.createServer((req, res) => {
  if (req.method !== "POST") return void res.writeHead(404).end();
  let body = "";
  req.on("data", (c: Buffer) => (body += c.toString()));
  req.on("end", () => {
    for (const socket of wss.clients) socket.send(body);
    res.writeHead(204).end();
  });
});
const wss = new WebSocketServer({ server });
server.listen(0, "127.0.0.1", () => {
  console.log(
    JSON.stringify({ msg: "baseline listening", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
  );
});
