// An OAuth 2.0 token endpoint for the benchmarks, as its own process: answers every POST /token
// (a client-credentials grant) with a new opaque bearer token valid for an hour, and counts them.
// Prints its URL as JSON.
import http from "node:http";
import type { AddressInfo } from "node:net";

let issued = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.method !== "POST" || req.url !== "/token") return void res.writeHead(404).end();
    issued++;
    res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" }).end(
      JSON.stringify({
        access_token: `bench-token-${issued}-${"x".repeat(600)}`,
        token_type: "Bearer",
        expires_in: 3600,
      }),
    );
  });
});
server.listen(0, "127.0.0.1", () => {
  console.log(
    JSON.stringify({
      msg: "token endpoint listening",
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    }),
  );
});
