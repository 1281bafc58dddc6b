// A callback receiver for the benchmarks, as its own process: answers OPTIONS with Allow: POST and
// every POST with 204. Prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";

const server = http.createServer((req, res) => {
  if (req.method === "OPTIONS") return void res.writeHead(204, { allow: "POST, OPTIONS" }).end();
  req.resume();
  req.on("end", () => res.writeHead(204).end());
});
server.keepAliveTimeout = 60_000;
server.listen(0, "127.0.0.1", () => {
  console.log(
    JSON.stringify({ msg: "receiver listening", url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
  );
});
