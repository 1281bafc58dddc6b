// The baseline the gateway's read routes are measured against: a bare `node:http` server answering
// fixed, pre-serialised bodies with the same status and content type, started by the benchmarks as its
// own process, like the gateway. It reads the request body (as any POST route must) and nothing else.
// Reads {"/path": "body", ...} as JSON from the file named by argv[2]; prints its URL.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";

const bodies = new Map(
  Object.entries(JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Record<string, string>).map(
    ([path, body]) => [path, Buffer.from(body)] as const,
  ),
);
const server = http.createServer((request, response) => {
  const body = bodies.get(request.url!.split("?")[0]!);
  request.resume();
  request.on("end", () => {
    if (!body) return response.writeHead(404).end();
    response
      .writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": body.length })
      .end(body);
  });
});
server.keepAliveTimeout = 72_000;
server.listen(0, "127.0.0.1", () => {
  const { port } = server.address() as AddressInfo;
  console.log(JSON.stringify({ msg: "baseline listening", url: `http://127.0.0.1:${port}` }));
});
// Exit through process.exit on SIGTERM, so that a run under --cpu-prof writes its profile.
process.on("SIGTERM", () => process.exit(0));
