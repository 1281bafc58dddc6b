import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { createPubSub } from "@graphql-yoga/subscription";
import type { Config } from "./config";
import { AppError, ERROR_TABLE } from "./errors";
import { type Database, openConfiguredDatabase } from "./db/database";
import { mountApollo } from "./graphql/apollo";
import type { GraphQLContext } from "./graphql/context";
import { createResponseCache } from "./graphql/response-cache";
import { createGraphQLPolicy } from "./graphql/policy";
import { buildGatewaySchema } from "./graphql/schema";
import { STATION_CACHE_POLICY } from "./stations/station.resolver";
import { registerHealthRoutes } from "./health/health.routes";
import { createHealthService } from "./health/health.service";
import { registerOpenApi } from "./http/openapi";
import { createHttpServer } from "./http/server";
import { authenticate } from "./http/auth";
import { createRateLimiter } from "./http/rate-limit";
import { createClientService } from "./clients/client.service";
import { createSecretBox, loadSecretsKey } from "./clients/secret-box";
import { createGuardedAgent } from "./outbound/guarded-agent";
import { createDeliveryCountsLoader } from "./delivery/delivery.loaders";
import { createDeliveryMetrics } from "./delivery/delivery.metrics";
import { startDeliveryWorker } from "./delivery/delivery.runtime";
import { createDeliveryService } from "./delivery/delivery.service";
import { createDeliveryStore } from "./delivery/delivery.store";
import type { RunningDeliveryWorker } from "./delivery/delivery.runtime";
import { registerDeliveryRoutes } from "./delivery/delivery.routes";
import { registerMilestoneRoutes } from "./milestones/milestone.routes";
import { createMilestoneService } from "./milestones/milestone.service";
import { milestoneView } from "./milestones/milestone.view";
import { createLiveEvents } from "./live/live-events";
import { registerSubscriptionRoutes } from "./subscriptions/subscription.routes";
import { createSubscriptionService } from "./subscriptions/subscription.service";
import { verifyCallback } from "./subscriptions/callback-verifier";
import { registerStationRoutes } from "./stations/station.routes";
import { problemSchema, stationSchema, temperatureProductsSchema } from "./stations/station.schemas";
import { createStationService } from "./stations/station.service";
import { createStationStore } from "./stations/station.store";
import { attachGraphQLWebsocket } from "./live/graphql-websocket";
import { createAwbStreams } from "./live/awb-streams";
import { registerLiveMetrics } from "./live/live.metrics";
import type { Services } from "./services";
import { loadWebAssets } from "./web/web-assets";
import { registerWebRoutes, sendIdePage, wantsHtml } from "./web/web.routes";

export interface App {
  readonly http: FastifyInstance;
  /** What the first start created (a client with every scope), with the credentials it generated. */
  readonly bootstrap: Awaited<ReturnType<ReturnType<typeof createClientService>["ensureBootstrapClient"]>>;
  readonly database: Database;
  readonly services: Services;
  /** The delivery worker of this process, unless DELIVERY_WORKER=false. */
  readonly worker: RunningDeliveryWorker | undefined;
  /** The URL the server listens on, once started. */
  url(): string;
  listen(): Promise<string>;
  /** Stops accepting, drains HTTP and websocket work, closes the database. Safe to call twice. */
  stop(): Promise<void>;
}

/** The composition root: every dependency is built here and handed down; nothing below reads globals. */
export async function createApp(config: Config, log: Logger): Promise<App> {
  const database = await openConfiguredDatabase(config, "stop it, or start this one with another DATA_DIR");
  if (database.appliedMigrations.length > 0)
    log.info({ migrations: database.appliedMigrations }, "applied database migrations");
  log.info(
    { database: database.kind, ...(database.kind === "pglite" ? { dataDir: config.dataDir } : {}) },
    "database ready",
  );

  const stations = createStationService({ store: createStationStore(database.prisma), log });
  await stations.start({ refreshIntervalMs: config.stationRefreshMs });
  const secretsKey = loadSecretsKey(config);
  log.info(
    { source: secretsKey.source, ...(secretsKey.file ? { file: secretsKey.file } : {}) },
    "signing secrets are sealed at rest",
  );
  const clients = createClientService({ prisma: database.prisma, log, secrets: createSecretBox(secretsKey.key) });
  await clients.prepareSecrets().catch(async (error: unknown) => {
    stations.stop();
    await database.close(); // release the data folder before reporting
    throw error;
  });
  const bootstrap = await clients.ensureBootstrapClient(config.bootstrap);
  // One agent for every call to a client's callback: keep-alive per origin, addresses checked on connect.
  const callbackAgent = createGuardedAgent({ allowPrivate: config.allowPrivateCallbacks });
  const live = createLiveEvents({ redisUrl: config.redisUrl, log });
  const deliveryStore = createDeliveryStore(database.sql);
  const metrics = createDeliveryMetrics(deliveryStore);
  let worker: RunningDeliveryWorker | undefined;
  const milestones = createMilestoneService({
    prisma: database.prisma,
    // The worker starts last; until then (and with DELIVERY_WORKER=false) it has no room.
    handoff: config.deliveryWorker
      ? {
          leaseMs: config.delivery.leaseMs,
          room: (origin) => worker?.handoff.room(origin) ?? 0,
          take: (deliveries, startedAt) => worker?.handoff.take(deliveries, startedAt),
        }
      : undefined,
    onCommitted: (events, deliveryCount) => {
      metrics.recordEvents(events.length);
      if (deliveryCount > 0) worker?.wake();
      // After the commit only: a live subscriber never sees an event that could still roll back.
      // On the next turn, so the ingestion's answer is not held up by a large local fan-out.
      const views = events.map(milestoneView);
      setImmediate(() => live.publish(views));
    },
  });
  const deliveries = createDeliveryService({ prisma: database.prisma, onRequeued: () => worker?.wake() });
  const services: Services = {
    health: createHealthService(database, live),
    stations,
    clients,
    subscriptions: createSubscriptionService({
      prisma: database.prisma,
      verifyCallback: (callback, check) => verifyCallback(callback, { ...check, dispatcher: callbackAgent }),
      allowPrivateCallbacks: config.allowPrivateCallbacks,
      enforceCheckDigit: config.awbCheckDigit === "enforce",
    }),
    milestones,
    deliveries,
    enforceCheckDigit: config.awbCheckDigit === "enforce",
  };
  const limiter = createRateLimiter({ perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst });
  const authenticateHeader = (header: string | undefined) => authenticate(header, clients, limiter);

  const http = createHttpServer(log);
  await registerOpenApi(http, [stationSchema, temperatureProductsSchema, problemSchema]);
  registerHealthRoutes(http, services.health);
  registerStationRoutes(http, { stations, carrier: config.carrierSegment });
  registerMilestoneRoutes(http, {
    milestones,
    carrier: config.carrierSegment,
    enforceCheckDigit: config.awbCheckDigit === "enforce",
    authenticate: (request) => authenticateHeader(request.headers.authorization),
  });
  registerDeliveryRoutes(http, {
    deliveries,
    carrier: config.carrierSegment,
    authenticate: (request) => authenticateHeader(request.headers.authorization),
  });
  const webAssets = loadWebAssets();
  registerWebRoutes(http, { assets: webAssets, log });
  http.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
  registerSubscriptionRoutes(http, {
    subscriptions: services.subscriptions,
    carrier: config.carrierSegment,
    authenticate: (request) => authenticateHeader(request.headers.authorization),
  });

  const graphqlPolicy = createGraphQLPolicy(config);
  if (graphqlPolicy.allowList)
    log.info({ operations: graphqlPolicy.allowList.size }, "GraphQL runs allow-listed operations only");
  const pubSub = createPubSub();
  const schema = await buildGatewaySchema(pubSub);
  // The logger and loaders are made on first use: a live subscription keeps its context for its
  // whole life and, once started, uses neither.
  const contextFor = (
    requestId: string,
    authorization: string | undefined,
    websocket?: GraphQLContext["websocket"],
  ): GraphQLContext => {
    let principal: ReturnType<typeof authenticateHeader> | undefined;
    let requestLog: Logger | undefined;
    let loaders: GraphQLContext["loaders"] | undefined;
    return {
      requestId,
      get log() {
        return (requestLog ??= log.child({ requestId }));
      },
      services,
      auth: () => (principal ??= authenticateHeader(authorization)),
      get loaders() {
        return (loaders ??= { deliveryCounts: createDeliveryCountsLoader(database.prisma) });
      },
      ...(websocket ? { websocket } : {}),
    };
  };
  /** One AWB's stored events after a position, as live subscribers see them (streams and catch-ups). */
  const readAfter = async (awb: string, position: number, limit: number) =>
    (await milestones.after(awb, BigInt(position), limit)).map(milestoneView);
  const streams = createAwbStreams({ live, store: { heads: milestones.heads, after: readAfter }, log });

  let websocketSeq = 0;
  const websocket = attachGraphQLWebsocket({
    httpServer: http.server,
    schema,
    policy: graphqlPolicy,
    log,
    limits: {
      maxConnectionsPerKey: config.liveMaxConnectionsPerKey,
      maxSubscriptionsPerSocket: config.liveMaxSubscriptionsPerSocket,
      takeMessageToken: (keyId) => limiter.take(keyId),
    },
    createContext: (socket, connectionParams, subscriptionId) => {
      const authorization = connectionParams?.authorization;
      return contextFor(`ws-${++websocketSeq}`, typeof authorization === "string" ? authorization : undefined, {
        socket,
        subscriptionId,
      });
    },
    authorize: async (authorization) => {
      try {
        const principal = await authenticateHeader(typeof authorization === "string" ? authorization : undefined);
        if (!principal)
          return {
            ok: false,
            code: ERROR_TABLE.UNAUTHENTICATED.close,
            reason: 'Send connection_init with { authorization: "Bearer <key>" }',
          };
        if (!principal.scopes.has("events:read"))
          return {
            ok: false,
            code: ERROR_TABLE.INSUFFICIENT_SCOPE.close,
            reason: "The API key lacks the events:read scope",
          };
        return { ok: true, keyId: principal.keyId };
      } catch (error) {
        const code = error instanceof AppError ? error.code : "INTERNAL";
        return {
          ok: false,
          code: ERROR_TABLE[code].close,
          reason: error instanceof AppError ? error.message : "Internal error",
        };
      }
    },
    recheckMs: config.liveKeyRecheckMs,
    recheck: async (keyId) => {
      const status = await clients.keyStatus(keyId);
      if (!status || status.revoked)
        return { ok: false, code: ERROR_TABLE.UNAUTHENTICATED.close, reason: "The API key was revoked" };
      if (!status.scopes.has("events:read"))
        return {
          ok: false,
          code: ERROR_TABLE.INSUFFICIENT_SCOPE.close,
          reason: "The API key no longer has the events:read scope",
        };
      return "valid";
    },
    live: { streams, readAfter, maxQueuedEvents: config.liveMaxQueuedEvents },
  });
  registerLiveMetrics(metrics.registry, {
    sockets: websocket.socketCount,
    subscriptions: websocket.subscriptionCount,
    streams: () => streams.size,
    executions: websocket.liveExecutions,
  });
  const apollo = await mountApollo({
    app: http,
    schema,
    log,
    policy: graphqlPolicy,
    createContext: async (request) => contextFor(String(request.id), request.headers.authorization),
    browserPage: { wants: wantsHtml, send: (reply) => sendIdePage(reply, webAssets) },
    ...(config.graphqlResponseCache
      ? { responseCache: createResponseCache(STATION_CACHE_POLICY, () => stations.snapshot().version) }
      : {}),
  });

  if (config.deliveryWorker)
    worker = startDeliveryWorker({ config, store: deliveryStore, clients, dispatcher: callbackAgent, metrics, log });

  let stopping: Promise<void> | undefined;
  const url = () => {
    const address = http.server.address() as AddressInfo | null;
    if (!address) throw new Error("The server is not listening");
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  };
  return {
    http,
    bootstrap,
    database,
    services,
    get worker() {
      return worker;
    },
    url,
    async listen() {
      await http.listen({ port: config.port, host: config.host });
      return url();
    },
    stop() {
      stopping ??= (async () => {
        // Websockets first (closed with 1001, new upgrades refused), then HTTP drains its in-flight
        // requests; only then are Apollo, the worker and the database stopped under them.
        await websocket.dispose();
        streams.close();
        await http.close();
        await apollo.stop();
        await worker?.stop();
        stations.stop();
        await callbackAgent.close();
        await live.close();
        await database.close();
      })();
      return stopping;
    },
  };
}
