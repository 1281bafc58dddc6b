import { createPubSub } from "@graphql-yoga/subscription";
import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Config } from "../config";
import { registerDeliveryRoutes } from "../delivery/delivery.routes";
import { createDeliveryCountsLoader } from "../delivery/delivery.loaders";
import { mountApollo } from "../graphql/apollo";
import type { GraphQLContext } from "../graphql-core/context";
import { createGraphQLPolicy } from "../graphql-core/policy";
import { createResponseCache, registerResponseCacheMetrics } from "../graphql/response-cache";
import { buildGatewaySchema } from "../graphql/schema";
import { registerHealthRoutes, registerMetricsRoute } from "../health/health.routes";
import { createAnonymousBudget, createSharedAnonymousBudget } from "../http/anonymous-budget";
import { admitCaller, authenticate } from "../http/auth";
import { createAuthFailureBudget, createSharedAuthFailureBudget } from "../http/auth-failures";
import { registerLimitMetrics } from "../http/limits.metrics";
import { registerOpenApi } from "../http/openapi";
import { enforceRouteAccess } from "../http/route-access";
import { createRateLimiter, createSharedRateLimiter } from "../http/rate-limit";
import { openSharedLimitStore } from "../http/shared-limits";
import { registerLogMetrics } from "../log";
import { clientAddressReader } from "../http/client-address";
import { answerRouterRefusalsUnder, createHttpServer } from "../http/server";
import { sendOneRecordRefusal } from "../onerecord/onerecord.routes";
import { createAwbStreams } from "../live/awb-streams";
import { createConnectionCap } from "../live/connection-cap";
import { attachGraphQLWebsocket, type GraphQLWebsocket } from "../live/graphql-websocket";
import { registerLiveMetrics } from "../live/live.metrics";
import { createWebsocketKeyCheck } from "../live/websocket-keys";
import { registerMilestoneRoutes } from "../milestones/milestone.routes";
import { milestoneView } from "../milestones/milestone.view";
import { createRetentionStore } from "../retention/retention.store";
import { registerStationRoutes } from "../stations/station.routes";
import { problemSchema, stationSchema, temperatureProductsSchema } from "../stations/station.schemas";
import { STATION_CACHE_POLICY } from "../stations/station.resolver";
import { registerSubscriptionRoutes } from "../subscriptions/subscription.routes";
import { requestTracing } from "../tracing/http-server";
import { loadWebAssets } from "../web/web-assets";
import { registerWebRoutes, sendIdePage, wantsHtml } from "../web/web.routes";
import type { BeforeStep, Core } from "./build-services";
import type { DisposerStack } from "./disposer-stack";
import { mountOneRecord } from "./mount-onerecord";

/**
 * Mounts every transport over the services on one port: REST routes, the API docs, the web pages,
 * /metrics, GraphQL over HTTP (Apollo) and over websockets. Each is put on `stack` when made, so it
 * closes before what it uses: the websockets first, then HTTP drains (Apollo stops after it).
 */
export async function mountTransports(
  core: Core,
  config: Config,
  log: Logger,
  stack: DisposerStack,
  beforeStep: BeforeStep,
): Promise<{ http: FastifyInstance; websocket: GraphQLWebsocket }> {
  const { services, database, live, metrics } = core;
  // With REDIS_URL the limits are counted in Redis, one budget for all instances, each instance's own
  // while Redis is unavailable (docs/SECURITY.md "Limits across instances").
  const sharedLimits = config.redisUrl
    ? openSharedLimitStore({ redisUrl: config.redisUrl, timeoutMs: config.limitsRedisTimeoutMs, log })
    : undefined;
  if (sharedLimits) stack.defer("shared-limits", () => sharedLimits.close());
  const requestRate = { perSecond: config.rateLimitPerSecond, burst: config.rateLimitBurst };
  const failureRate = { perSecond: config.authFailureLimitPerSecond, burst: config.authFailureLimitBurst };
  const limiter = sharedLimits
    ? createSharedRateLimiter({ ...requestRate, store: sharedLimits })
    : createRateLimiter(requestRate);
  const failures = sharedLimits
    ? createSharedAuthFailureBudget({ ...failureRate, store: sharedLimits })
    : createAuthFailureBudget(failureRate);
  const anonymousRate = { perSecond: config.graphqlAnonymousLimitPerSecond, burst: config.graphqlAnonymousLimitBurst };
  const anonymous = sharedLimits
    ? createSharedAnonymousBudget({ ...anonymousRate, store: sharedLimits })
    : createAnonymousBudget(anonymousRate);
  // REST, GraphQL over HTTP and a websocket's connection_init hand the caller's address, so their
  // failed authentications spend its budget; without an address (none so far) none applies.
  const authenticateHeader = (header: string | undefined, address: string | undefined) =>
    authenticate(header, services.clients, limiter, address === undefined ? undefined : { address, failures });
  const carrier = config.carrierSegment;

  await beforeStep("http");
  const clientAddress = clientAddressReader(config.trustProxy);
  const http = createHttpServer(log, { clientAddress, tracing: requestTracing() });
  stack.defer("http", () => http.close());
  const authenticateRequest = (request: { headers: { authorization?: string }; ip: string }) =>
    authenticateHeader(request.headers.authorization, request.ip);
  enforceRouteAccess(http, authenticateRequest);
  await registerOpenApi(http, [stationSchema, temperatureProductsSchema, problemSchema]);
  registerHealthRoutes(http, services.health);
  registerMetricsRoute(http, metrics.registry);
  registerLogMetrics(metrics.registry);
  registerLimitMetrics(metrics.registry, sharedLimits);
  registerStationRoutes(http, { stations: services.stations, carrier });
  await registerMilestoneRoutes(http, {
    milestones: services.milestones,
    carrier,
    enforceCheckDigit: services.enforceCheckDigit,
    timeZoneOf: (station) => services.stations.timeZoneOf(station),
    isStation: (code) => services.stations.isStation(code),
  });
  registerDeliveryRoutes(http, { deliveries: services.deliveries, carrier });
  registerSubscriptionRoutes(http, {
    subscriptions: services.subscriptions,
    carrier,
  });
  await mountOneRecord(http, config, authenticateHeader, { failures, limiter }, core);
  // URLs the router refuses under the ONE Record base path, before its plugin runs, get api:Error too.
  answerRouterRefusalsUnder(http, config.oneRecord.basePath, sendOneRecordRefusal);
  const webAssets = loadWebAssets();
  registerWebRoutes(http, { assets: webAssets, log });

  const policy = createGraphQLPolicy(config);
  if (policy.allowList) log.info({ operations: policy.allowList.size }, "GraphQL runs allow-listed operations only");
  const schema = await buildGatewaySchema(createPubSub());
  // The logger and loaders are made on first use: a live subscription keeps its context for its
  // whole life and, once started, uses neither.
  const contextFor = (
    requestId: string,
    authorization: string | undefined,
    address: string | undefined,
    websocket?: GraphQLContext["websocket"],
    caller?: ReturnType<typeof authenticateHeader>,
  ): GraphQLContext => {
    // `caller`: the key already authenticated when the request was admitted (GraphQL over HTTP).
    let principal: ReturnType<typeof authenticateHeader> | undefined = caller;
    let requestLog: Logger | undefined;
    let loaders: GraphQLContext["loaders"] | undefined;
    return {
      requestId,
      get log() {
        return (requestLog ??= log.child({ requestId }));
      },
      services,
      auth: () => (principal ??= authenticateHeader(authorization, address)),
      get loaders() {
        return (loaders ??= { deliveryCounts: createDeliveryCountsLoader(database.prisma) });
      },
      ...(websocket ? { websocket } : {}),
    };
  };

  await beforeStep("live-streams");
  /** One AWB's stored events after a position, as live subscribers see them (streams and catch-ups). */
  const readAfter = async (awb: string, position: number, limit: number) =>
    (await services.milestones.after(awb, BigInt(position), limit)).map(milestoneView);
  const { prunedThrough } = createRetentionStore(database.prisma);
  const streams = createAwbStreams({
    live,
    store: { heads: services.milestones.heads, after: readAfter, prunedThrough },
    log,
  });
  stack.defer("live-streams", () => streams.close());

  await beforeStep("websocket");
  const keys = createWebsocketKeyCheck({ authenticate: authenticateHeader, clients: services.clients });
  const connections = createConnectionCap({
    max: config.liveMaxConnectionsPerKey,
    ...(sharedLimits ? { shared: { store: sharedLimits, leaseMs: config.liveConnectionLeaseMs } } : {}),
  });
  stack.defer("connection-cap", () => connections.close());
  let websocketSeq = 0;
  const websocket = attachGraphQLWebsocket({
    httpServer: http.server,
    schema,
    policy,
    log,
    limits: {
      connections,
      maxSubscriptionsPerSocket: config.liveMaxSubscriptionsPerSocket,
      takeMessageToken: (keyId) => limiter.takeWithoutWaiting(keyId),
    },
    createContext: (socket, connectionParams, subscriptionId) => {
      const authorization = connectionParams?.authorization;
      const key = typeof authorization === "string" ? authorization : undefined;
      return contextFor(`ws-${++websocketSeq}`, key, undefined, { socket, subscriptionId });
    },
    authorize: keys.authorize,
    addressOf: clientAddress.addressOf,
    recheck: keys.recheck,
    recheckMs: config.liveKeyRecheckMs,
    keepAliveMs: config.liveKeepAliveMs,
    live: { streams, readAfter, maxQueuedEvents: config.liveMaxQueuedEvents },
  });
  stack.defer("websocket", () => websocket.dispose());
  registerLiveMetrics(metrics.registry, {
    sockets: websocket.socketCount,
    subscriptions: websocket.subscriptionCount,
    streams: () => streams.size,
    executions: websocket.liveExecutions,
  });

  await beforeStep("graphql");
  const responseCache = config.graphqlResponseCache
    ? createResponseCache(STATION_CACHE_POLICY, () => services.stations.snapshot().version)
    : undefined;
  if (responseCache) registerResponseCacheMetrics(metrics.registry, responseCache);
  // Apollo is stopped by the HTTP server's close, after in-flight requests have drained (onClose).
  await mountApollo({
    app: http,
    schema,
    log,
    policy,
    // Every request spends a budget before its document is parsed: its key's, or its address's.
    admit: (request) => admitCaller(request.headers.authorization, request.ip, authenticateHeader, anonymous),
    createContext: (request, admission) =>
      Promise.resolve(
        contextFor(String(request.id), request.headers.authorization, request.ip, undefined, admission?.caller),
      ),
    browserPage: { wants: wantsHtml, send: (reply) => sendIdePage(reply, webAssets) },
    ...(responseCache ? { responseCache } : {}),
  });
  return { http, websocket };
}
