import { ApolloServer } from "@apollo/server";
import { ApolloServerPluginLandingPageDisabled } from "@apollo/server/plugin/disabled";
import fastifyApollo, { fastifyApolloDrainPlugin } from "@as-integrations/fastify";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { GraphQLSchema } from "graphql";
import type { Logger } from "pino";
import type { GraphQLContext } from "./context";
import { depthLimit } from "./depth-limit";
import { formatGraphQLError } from "./errors";
import type { GraphQLRequestBody, ResponseCache } from "./response-cache";

/** Apollo Server at POST /graphql on the Fastify instance; `onDrain` runs when Apollo stops. */
export async function mountApollo(options: {
  app: FastifyInstance;
  schema: GraphQLSchema;
  log: Logger;
  introspection: boolean;
  createContext: (request: FastifyRequest) => Promise<GraphQLContext>;
  onDrain: () => Promise<void>;
  responseCache?: ResponseCache;
}): Promise<ApolloServer<GraphQLContext>> {
  const { app, schema, log, introspection, createContext, onDrain, responseCache } = options;
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    introspection,
    includeStacktraceInErrorResponses: false,
    validationRules: [depthLimit()],
    // The default landing page loads Apollo's sandbox from the internet; the IDE is served by us.
    plugins: [
      fastifyApolloDrainPlugin(app),
      ApolloServerPluginLandingPageDisabled(),
      { async serverWillStart() { return { drainServer: onDrain }; } },
    ],
    formatError: (formatted, error) => formatGraphQLError(formatted, error, (cause) => log.error({ err: cause }, "graphql resolver failed")),
  });
  await apollo.start();
  // An encapsulated scope, so the cache's hooks run for /graphql only, not on every route.
  await app.register(async (scope) => {
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
