import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createPubSub } from "@graphql-yoga/subscription";
import type { Config } from "./config";
import { type Database, openDatabase } from "./db/database";
import { mountApollo } from "./graphql/apollo";
import type { GraphQLContext } from "./graphql/context";
import { createResponseCache } from "./graphql/response-cache";
import { buildGatewaySchema } from "./graphql/schema";
import { STATION_CACHE_POLICY } from "./stations/station.resolver";
import { registerHealthRoutes } from "./health/health.routes";
import { createHealthService } from "./health/health.service";
import { registerOpenApi } from "./http/openapi";
import { createHttpServer } from "./http/server";
import { registerStationRoutes } from "./stations/station.routes";
import { problemSchema, stationSchema, temperatureProductsSchema } from "./stations/station.schemas";
import { createStationService } from "./stations/station.service";
import { createStationStore } from "./stations/station.store";
import { attachGraphQLWebsocket } from "./live/graphql-websocket";
import type { Services } from "./services";

export interface App {
  readonly http: FastifyInstance;
  readonly database: Database;
  readonly services: Services;
  /** The URL the server listens on, once started. */
  url(): string;
  listen(): Promise<string>;
  /** Stops accepting, drains HTTP and websocket work, closes the database. Safe to call twice. */
  stop(): Promise<void>;
}

/** The composition root: every dependency is built here and handed down; nothing below reads globals. */
export async function createApp(config: Config, log: Logger): Promise<App> {
  const database = await openDatabase(
    config.databaseUrl ? { kind: "postgres", url: config.databaseUrl } : { kind: "pglite", dataDir: config.dataDir },
  );
  if (database.appliedMigrations.length > 0) log.info({ migrations: database.appliedMigrations }, "applied database migrations");
  log.info({ database: database.kind, ...(database.kind === "pglite" ? { dataDir: config.dataDir } : {}) }, "database ready");

  const stations = createStationService({ store: createStationStore(database.prisma), log });
  await stations.start({ refreshIntervalMs: config.stationRefreshMs });
  const services: Services = {
    health: createHealthService(database, () => true),
    stations,
  };

  const http = createHttpServer(log);
  await registerOpenApi(http, [stationSchema, temperatureProductsSchema, problemSchema]);
  registerHealthRoutes(http, services.health);
  registerStationRoutes(http, { stations, carrier: config.carrierSegment });

  const pubSub = createPubSub();
  const schema = await buildGatewaySchema(pubSub);
  const contextFor = (requestId: string): GraphQLContext => ({ requestId, log: log.child({ requestId }), services });

  let websocketSeq = 0;
  const websocket = attachGraphQLWebsocket({
    httpServer: http.server,
    schema,
    log,
    createContext: () => contextFor(`ws-${++websocketSeq}`),
  });
  await mountApollo({
    app: http,
    schema,
    log,
    introspection: config.graphqlIntrospection,
    createContext: async (request) => contextFor(String(request.id)),
    onDrain: () => websocket.dispose(),
    ...(config.graphqlResponseCache ? { responseCache: createResponseCache(STATION_CACHE_POLICY, () => stations.snapshot().version) } : {}),
  });

  let stopping: Promise<void> | undefined;
  const url = () => {
    const address = http.server.address() as AddressInfo | null;
    if (!address) throw new Error("The server is not listening");
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  };
  return {
    http,
    database,
    services,
    url,
    async listen() {
      await http.listen({ port: config.port, host: config.host });
      return url();
    },
    stop() {
      stopping ??= (async () => {
        // Fastify's close runs Apollo's drain (which disposes the websocket server) and waits for
        // in-flight requests; only then is the database closed under them.
        await http.close();
        stations.stop();
        await database.close();
      })();
      return stopping;
    },
  };
}
