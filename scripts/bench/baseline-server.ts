// A bare Fastify server that answers fixed, pre-serialised bodies: the baseline that the gateway's
// routes are measured against. Started by the benchmarks as its own process, like the gateway.
// Reads {"/path": "body", ...} as JSON from the file named by argv[2]; prints its URL.
import { readFileSync } from "node:fs";
import Fastify from "fastify";

const routes = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as Record<string, string>;
const app = Fastify({ logger: false });
for (const [path, body] of Object.entries(routes)) {
  app.route({
    method: ["GET", "POST"],
    url: path,
    handler: (_request, reply) => reply.type("application/json; charset=utf-8").send(body),
  });
}
void app
  .listen({ port: 0, host: "127.0.0.1" })
  .then((url) => console.log(JSON.stringify({ msg: "baseline listening", url })));
