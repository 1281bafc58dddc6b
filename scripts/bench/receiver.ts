// A callback receiver for the benchmarks, as its own process: answers OPTIONS with Allow: POST and
// every POST with 204; GET /count answers how many POSTs it has received so far. Prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";

let posts = 0;
const server = http.createServer((req, res) => {
  if (req.method === "OPTIONS") return void res.writeHead(204, { allow: "POST, OPTIONS" }).end();
  if (req.method === "GET" && req.url === "/count")
    return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ posts }));
  req.resume();
  req.on("end", () => {
    posts++;
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  console.log(
    JSON.stringify({ msg: "receiver listening", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
  );
});
