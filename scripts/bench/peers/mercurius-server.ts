// The GraphQL peer of bench:peers, as its own process: Mercurius with graphql-jit on Fastify, serving
// the gateway's own schema.graphql. `Query.station` is resolved as the gateway resolves it, by the
// gateway's station service over its in-memory snapshot, loaded from the data set the gateway seeds
// its database with (the bundled station file, through the same validator).
// Always jit after one use and Mercurius' document cache (on by default); MERCURIUS_RESPONSE_CACHE=true
// adds mercurius-cache on `Query.station`. Listens on PORT; answers GET /readyz once it serves.
// Logging is matched to the gateway's default: pino at info, asynchronous writes to standard output,
// one access line per request (Fastify's two request lines made one, as Fastify's documentation shows).
import { readFileSync } from "node:fs";
import path from "node:path";
import Fastify, { type FastifyReply, type FastifyRequest, LogController } from "fastify";
import mercurius from "mercurius";
import mercuriusCache from "mercurius-cache";
import pino from "pino";
import { BUNDLED_STATIONS_FILE, createStationService } from "../../../src/stations/station.service";
import type { StationStore } from "../../../src/stations/station.store";
import { validateStationFile } from "../../../src/stations/station.validate";

const SCHEMA_FILE = path.resolve(__dirname, "../../../../schema.graphql");

/** A store holding the bundled data set, read once: the peer has no database of its own to write. */
function bundledStationStore(): StationStore {
  const result = validateStationFile(JSON.parse(readFileSync(BUNDLED_STATIONS_FILE, "utf8")));
  if (!result.ok) throw new Error("the bundled station file is invalid");
  const records = result.stations;
  return {
    version: () => Promise.resolve(1),
    loadAll: () => Promise.resolve({ version: 1, records }),
    replaceAll: () => Promise.reject(new Error("the peer does not import station data")),
  };
}

/** Fastify's documented way to log a request in one line: the arrival at debug, the completion with both. */
class OneLinePerRequest extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, "incoming request");
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (error)
      reply.log.error({ req: request, res: reply, err: error, responseTime: reply.elapsedTime }, "request errored");
    else reply.log.info({ req: request, res: reply, responseTime: reply.elapsedTime }, "request completed");
  }
}

async function main(): Promise<void> {
  const log = pino({ level: "info" }, pino.destination({ dest: 1, sync: false }));
  const stations = createStationService({ store: bundledStationStore(), log });
  await stations.start({ loadBundled: false, refreshIntervalMs: 0 });

  const app = Fastify({ loggerInstance: log, logController: new OneLinePerRequest() });
  await app.register(mercurius, {
    schema: readFileSync(SCHEMA_FILE, "utf8"),
    resolvers: {
      Query: {
        station: (_root: unknown, { code }: { code: string }) => stations.find(code)?.view ?? null,
      },
    },
    jit: 1,
  });
  if (process.env.MERCURIUS_RESPONSE_CACHE === "true")
    await app.register(mercuriusCache, { ttl: 60, policy: { Query: { station: true } } });
  app.get("/readyz", () => ({ status: "ready" }));
  await app.listen({ port: Number(process.env.PORT), host: "127.0.0.1" });
}

// Exit through process.exit on SIGTERM, so that a run under --cpu-prof writes its profile.
process.on("SIGTERM", () => process.exit(0));
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
