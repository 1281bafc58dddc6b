import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import fastifyApollo from "@as-integrations/fastify";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "pino";
import type { GraphQLContext } from "./context";
import { depthLimit } from "./depth-limit";
import { formatGraphQLError } from "./errors";
import type { GraphQLRequestBody, ResponseCache } from "./response-cache";

/**
 * Apollo Server at /graphql on the Fastify instance. The caller stops it (after the HTTP server has
 * drained): shutdown is ordered in one place, App.stop, not by Apollo's own signal handlers.
 */
export async function mountApollo(options: {
  app: FastifyInstance;
  schema: GraphQLSchema;
  log: Logger;
  introspection: boolean;
  createContext: (request: FastifyRequest) => Promise<GraphQLContext>;
  responseCache?: ResponseCache;
  /** A page for browsers at GET /graphql (the IDE), when `wants` says the request is one. */
  browserPage?: { wants(request: FastifyRequest): boolean; send(reply: FastifyReply): FastifyReply };
}): Promise<ApolloServer<GraphQLContext>> {
  const { app, schema, log, introspection, createContext, responseCache, browserPage } = options;
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection,
    includeStacktraceInErrorResponses: false,
    validationRules: [depthLimit()],
    // The default landing page loads Apollo's sandbox from the internet; the IDE is served by us.
    plugins: [ApolloServerPluginLandingPageDisabled()],
    stopOnTerminationSignals: false,
    formatError: (formatted, error) => formatGraphQLError(formatted, error, (cause) => log.error({ err: cause }, "graphql resolver failed")),
  });
  await apollo.start();
  // An encapsulated scope, so the cache's hooks run for /graphql only, not on every route.
  await app.register(async (scope) => {
    if (browserPage) {
      scope.addHook("onRequest", (request, reply, done) => {
        if (browserPage.wants(request)) browserPage.send(reply);
        else done();
      });
    }
    if (responseCache) serveFromCache(scope, responseCache);
    await scope.register(fastifyApollo(apollo), { path: "/graphql", method: ["GET", "POST", "OPTIONS"], context: createContext });
  });
  return apollo;
}

const CACHE_VERSION = Symbol("responseCacheVersion");
type CachingRequest = FastifyRequest & { [CACHE_VERSION]?: number };

/**
 * Answers repeated read-only operations from the response cache before Apollo sees them, and keeps
 * Apollo's answers to cacheable ones. Registered before Apollo's route so its hooks apply to it.
 */
function serveFromCache(app: FastifyInstance, cache: ResponseCache): void {
  app.addHook("preHandler", (request: CachingRequest, reply, done) => {
    if (request.method !== "POST") return done();
    const hit = cache.get(request.body as GraphQLRequestBody, request.headers.accept ?? "");
    if (!hit) {
      request[CACHE_VERSION] = cache.version();
      return done();
    }
    reply.header("x-response-cache", "hit").type(hit.contentType).send(hit.body);
  });
  app.addHook("onSend", async (request: CachingRequest, reply, payload) => {
    const version = request[CACHE_VERSION];
    if (version !== undefined && reply.statusCode === 200 && typeof payload === "string") {
      const contentType = String(reply.getHeader("content-type") ?? "application/json");
      cache.store(request.body as GraphQLRequestBody, request.headers.accept ?? "", version, { contentType, body: payload });
    }
    return payload;
  });
}
