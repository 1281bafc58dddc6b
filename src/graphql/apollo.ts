import { ApolloServer, type ApolloServerOptionsWithGateway, type ApolloServerPlugin } from "@apollo/server";
import {
  ApolloServerPluginCacheControlDisabled,
  ApolloServerPluginLandingPageDisabled,
} from "@apollo/server/plugin/disabled";
import type { SwaggerTransform } from "@fastify/swagger";
import { fastifyApolloHandler } from "@as-integrations/fastify";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type DocumentNode, type GraphQLSchema, Kind, OperationTypeNode, parse, printSchema } from "graphql";
import type { Logger } from "pino";
import type { GraphQLContext } from "../graphql-core/context";
import { AppError } from "../errors";
import { compiledExecutorFor } from "../graphql-core/compiled-executor";
import { createExecutionTurns } from "../event-loop-turns";
import { operationLimitsPlugin } from "./limits-plugin";
import { graphqlErrorOf, type GraphQLPolicy } from "../graphql-core/policy";
import { formatGraphQLError } from "../graphql-core/errors";
import { checkDocumentLength, checkFieldComparisons } from "../graphql-core/field-comparisons";
import type { CachedResponse, GraphQLRequestBody, ResponseCache } from "./response-cache";
import { decodeJsonText, parseJsonBodyInto } from "../http/json-body";
import { executeInSpan, traceResolvers } from "../tracing/graphql";

/**
 * Apollo Server at /graphql on the Fastify instance. It stops when the Fastify instance closes, after
 * in-flight requests have drained (an onClose hook), not on Apollo's own signal handlers. Queries
 * run compiled (compiledGateway below).
 */
export async function mountApollo<Admission extends { caller: Promise<unknown> }>(options: {
  app: FastifyInstance;
  schema: GraphQLSchema;
  log: Logger;
  policy: GraphQLPolicy;
  /**
   * Runs first for every GET or POST to /graphql, before the body is parsed: charges the caller's
   * budget. An AppError it throws is the answer (RATE_LIMITED: 429 with Retry-After); what it returns
   * is handed to `createContext` (undefined for an OPTIONS request, which Apollo refuses after making
   * its context). Its `caller` is null, or rejects, for a request without a key or whose key does not
   * authenticate: such a request is held to the policy's anonymous limits.
   */
  admit: (request: FastifyRequest) => Promise<Admission>;
  createContext: (request: FastifyRequest, admission: Admission | undefined) => Promise<GraphQLContext>;
  responseCache?: ResponseCache;
  /** A page for browsers at GET /graphql (the IDE), when `wants` says the request is one. */
  browserPage?: { wants(request: FastifyRequest): boolean; send(reply: FastifyReply): FastifyReply };
}): Promise<ApolloServer<GraphQLContext>> {
  const { app, schema, log, policy, admit, createContext, responseCache, browserPage } = options;
  // With tracing on: before any operation runs, so that every compiled query calls the wrappers.
  traceResolvers(schema);
  const turns = createExecutionTurns();
  const apollo = new ApolloServer<GraphQLContext>({
    gateway: compiledGateway(schema),
    introspection: policy.introspection,
    includeStacktraceInErrorResponses: false,
    validationRules: [...policy.validationRules],
    // The parser stops past this many tokens: nothing longer reaches validation.
    parseOptions: { maxTokens: policy.maxTokens },
    allowBatchedHttpRequests: policy.maxBatch > 1,
    plugins: [
      // The default landing page loads Apollo's sandbox from the internet; the IDE is served by us.
      ApolloServerPluginLandingPageDisabled(),
      // Its per-field hook wraps every resolver and runs on every field of every operation, only to
      // find no cache hints (this schema has none) and answer `cache-control: no-store`, sent below.
      ApolloServerPluginCacheControlDisabled(),
      noStore,
      operationLimitsPlugin({
        limits: policy.limits,
        anonymousLimits: policy.anonymousLimits,
        timeLimitMs: policy.timeLimitMs,
        turns,
      }),
    ],
    stopOnTerminationSignals: false,
    formatError: (formatted, error) =>
      formatGraphQLError(formatted, error, (cause) => log.error({ err: cause }, "graphql resolver failed"), {
        hideSuggestions: !policy.introspection,
      }),
  });
  await apollo.start();
  app.addHook("onClose", () => apollo.stop());
  const admissions = new WeakMap<FastifyRequest, Admission>();
  /** Requests whose key authenticated; any other is held to the anonymous limits. */
  const keyed = new WeakSet<FastifyRequest>();
  // An encapsulated scope, so the cache's hooks run for /graphql only, not on every route.
  await app.register(async (scope) => {
    if (browserPage) {
      scope.addHook("onRequest", (request, reply, done) => {
        if (browserPage.wants(request)) browserPage.send(reply);
        else done();
      });
    }
    // Before the body is read, so a refused request costs no parsing; answers from the cache are
    // charged too (they are requests all the same).
    scope.addHook("onRequest", async (request, reply) => {
      if (request.method !== "GET" && request.method !== "POST") return;
      let admission: Admission;
      try {
        admission = await admit(request);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return refuse(reply, error);
      }
      admissions.set(request, admission);
      const authenticated = await admission.caller.then(
        (caller) => caller !== null,
        () => false,
      );
      if (authenticated) keyed.add(request);
    });
    // Once the body is read, each request takes its turn (event-loop-turns.ts): what follows — the
    // checks, Apollo's parsing, validation and execution, the answer's serialisation — runs in one go
    // for one request at a time, with the event loop's I/O served between requests.
    scope.addHook("preHandler", async () => {
      await turns.next();
    });
    scope.addHook("preHandler", (request, reply, done) => {
      try {
        admitRequest(request, policy, keyed.has(request) ? policy.maxBatch : policy.anonymousMaxBatch);
        done();
      } catch (error) {
        if (!(error instanceof AppError)) return done(error as Error);
        refuse(reply, error);
      }
    });
    if (responseCache) serveFromCache(scope, responseCache, (request) => keyed.has(request));
    const handler = fastifyApolloHandler(apollo, {
      context: (request: FastifyRequest) => createContext(request, admissions.get(request)),
    });
    // One route per method, each its own operation in /openapi.json; OPTIONS is no operation of the API.
    for (const method of ["GET", "POST", "OPTIONS"] as const)
      scope.route({
        url: "/graphql",
        method,
        schema: method === "OPTIONS" ? { hide: true } : GRAPHQL_OPERATIONS[method],
        config: { auth: "per-field", swaggerTransform: documentedAnswers },
        handler,
      });
  });
  return apollo;
}

/** What /openapi.json says of GET and POST /graphql; schema.graphql and docs/API.md say the rest. */
const GRAPHQL_OPERATIONS = {
  GET: {
    tags: ["graphql"],
    operationId: "queryGraphqlByGet",
    summary: "Run a GraphQL query given in the query string",
    description:
      "GraphQL over HTTP: `query`, `operationName` and `variables` (JSON) in the query string; queries only, mutations take POST. The request needs a `content-type` header or an `apollo-require-preflight` one (cross-site request forgery protection). A browser asking for text/html gets the GraphQL IDE instead. Fields that need a key say which scope in schema.graphql.",
  },
  POST: {
    tags: ["graphql"],
    operationId: "executeGraphql",
    summary: "Run a GraphQL query or mutation, or a batch of them",
    description:
      "GraphQL over HTTP: a JSON body `{ query, operationName?, variables? }`, or an array of them (a batch). Subscriptions go over the websocket at the same path (protocol graphql-transport-ws). Fields that need a key say which scope in schema.graphql.",
  },
} as const;

const graphqlResult = {
  type: "object",
  description: "GraphQL over HTTP's result: `data`, and `errors` each with `extensions.code` (docs/API.md lists them)",
  properties: { data: { type: ["object", "null"] }, errors: { type: "array", items: { type: "object" } } },
};
const graphqlAnswer = (description: string, withProblem: boolean) => ({
  description,
  content: {
    "application/json": { schema: graphqlResult },
    ...(withProblem ? { "application/problem+json": { schema: { $ref: "Problem#" } } } : {}),
  },
});
const retryAfter = { "retry-after": { type: "integer", description: "Seconds to wait before retrying" } };

/**
 * GraphQL's answers, for the document only: a route response schema would also be Fastify's
 * serializer for the refusals sent as objects (`refuse` below).
 */
const documentedAnswers: SwaggerTransform = ({ schema, url }) => ({
  url,
  schema: {
    ...schema,
    response: {
      200: {
        description: "The result (errors of single fields included)",
        content: {
          "application/json": { schema: graphqlResult },
          "application/graphql-response+json": { schema: graphqlResult },
        },
      },
      400: graphqlAnswer(
        "Not a GraphQL request this server runs: no query, a syntax or validation error, over a limit (QUERY_TOO_COMPLEX), or a body that is not JSON (MALFORMED_JSON, problem+json)",
        true,
      ),
      403: graphqlAnswer("The operation is not on the allow-list (OPERATION_NOT_ALLOWED)", false),
      413: {
        description: "The body exceeds 1 MiB (PAYLOAD_TOO_LARGE)",
        content: { "application/problem+json": { schema: { $ref: "Problem#" } } },
      },
      429: {
        ...graphqlAnswer("Over the rate limit of the key, or of requests without one (RATE_LIMITED)", false),
        headers: retryAfter,
      },
      503: {
        ...graphqlAnswer("A query ran past its time limit (OPERATION_TIMED_OUT)", false),
        headers: retryAfter,
      },
    },
  },
});

/**
 * Apollo Server 5 takes no executor of one's own; its `gateway` option (made for Apollo Gateway) is
 * the hook it has: a gateway hands over the schema and an executor, which Apollo calls with each
 * operation once it has parsed and validated it and the plugins' hooks up to `executionDidStart` have
 * run (the operation limits, the deadline). The executor runs queries compiled (compiled-executor.ts).
 */
type Gateway = ApolloServerOptionsWithGateway<GraphQLContext>["gateway"];
function compiledGateway(schema: GraphQLSchema): Gateway {
  const executor = compiledExecutorFor(schema);
  let announce: Parameters<Gateway["onSchemaLoadOrUpdate"]>[0] | undefined;
  return {
    onSchemaLoadOrUpdate(callback) {
      announce = callback;
      return () => (announce = undefined);
    },
    // Apollo expects the schema announced by the time `load` resolves.
    async load() {
      announce?.({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return {
        executor: async ({ document, source, request, context, operation }) =>
          executeInSpan(operation, () =>
            executor.execute(
              {
                schema,
                document,
                operationName: request.operationName,
                variableValues: request.variables,
                contextValue: context,
              },
              source,
            ),
          ),
      };
    },
    async stop() {},
  };
}

/** A refusal given before Apollo runs, in GraphQL's shape, with `Retry-After` when the error has a wait. */
function refuse(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header("retry-after", String(Math.ceil(error.retryAfterSeconds)));
  return reply
    .code(error.status)
    .type("application/json; charset=utf-8")
    .send({ errors: [graphqlErrorOf(error).toJSON()] });
}

/** What Apollo's cache-control plugin answered on every response (no field has a cache hint). */
const noStore: ApolloServerPlugin<GraphQLContext> = {
  async requestDidStart() {
    return {
      async willSendResponse({ response }) {
        response.http.headers.set("cache-control", "no-store");
      },
    };
  },
};

/**
 * What is checked before Apollo parses anything: the batch size (`maxBatch`: the caller's); with an
 * allow-list, that each operation is listed (an id alone is replaced by its document, so Apollo runs
 * the stored text); and that no document holds a subscription operation or fields validation would
 * compare too often (`refuseBeforeApollo`).
 */
function admitRequest(request: FastifyRequest, policy: GraphQLPolicy, maxBatch: number): void {
  const body = request.body;
  if (Array.isArray(body)) {
    if (body.length > maxBatch)
      throw new AppError(
        "QUERY_TOO_COMPLEX",
        maxBatch < policy.maxBatch
          ? `Without an API key a batch may hold at most ${maxBatch} operation${maxBatch === 1 ? "" : "s"}; this one has ${body.length}`
          : `A batch may hold at most ${maxBatch} operations; this one has ${body.length}`,
      );
    for (const operation of body) admitOperation(operation, policy);
    return;
  }
  if (request.method === "GET") {
    // Apollo reads a GET operation from the URL itself, so the URL is what gets rewritten.
    const url = request.raw.url!;
    const mark = url.indexOf("?");
    const [pathname, search] = mark < 0 ? [url, ""] : [url.slice(0, mark), url.slice(mark + 1)];
    const params = new URLSearchParams(search);
    if (policy.allowList) {
      let extensions: unknown;
      try {
        extensions = params.has("extensions") ? JSON.parse(params.get("extensions")!) : undefined;
      } catch {
        throw new AppError("VALIDATION_FAILED", "The extensions parameter is not valid JSON");
      }
      params.set("query", policy.allowList.resolve({ query: params.get("query") ?? undefined, extensions }));
      params.delete("extensions");
      request.raw.url = `${pathname}?${params.toString()}`;
    }
    refuseBeforeApollo(params.get("query"), policy);
  } else if (request.method === "POST") admitOperation(body, policy);
}

function admitOperation(operation: unknown, policy: GraphQLPolicy): void {
  if (typeof operation !== "object" || operation === null) return; // Apollo answers malformed bodies itself
  const fields = operation as { query?: unknown; extensions?: { persistedQuery?: unknown } };
  if (policy.allowList) {
    fields.query = policy.allowList.resolve(fields);
    if (fields.extensions) delete fields.extensions.persistedQuery;
  }
  refuseBeforeApollo(fields.query, policy);
}

/**
 * Verdicts of `refuseBeforeApollo` by policy (they depend on its token limit), then by document text,
 * oldest first (a text is checked once).
 */
const verdictsByPolicy = new WeakMap<GraphQLPolicy, Map<string, AppError | null>>();
const MAX_VERDICTS = 1_000;

/**
 * What a document is refused for before Apollo parses and validates it:
 * - a subscription operation: subscriptions run over the websocket only. Over HTTP Apollo would
 *   execute one's field as a query's (which fails inside), and before that graphql-js 16 can throw
 *   while validating one (subscription-root.ts): either way an INTERNAL answer;
 * - a text too long, or fields repeated under one name so often that validation would spend a
 *   request's worth of CPU many times over comparing them (field-comparisons.ts).
 * A text that does not parse is left to Apollo, which reports the syntax error.
 */
function refuseBeforeApollo(query: unknown, policy: GraphQLPolicy): void {
  if (typeof query !== "string") return;
  checkDocumentLength(query);
  let verdicts = verdictsByPolicy.get(policy);
  if (!verdicts) verdictsByPolicy.set(policy, (verdicts = new Map<string, AppError | null>()));
  let verdict = verdicts.get(query);
  if (verdict === undefined) {
    verdict = verdictOf(query, policy);
    if (verdicts.size >= MAX_VERDICTS) verdicts.delete(verdicts.keys().next().value!);
    verdicts.set(query, verdict);
  }
  if (verdict) throw verdict;
}

function verdictOf(query: string, policy: GraphQLPolicy): AppError | null {
  let document: DocumentNode;
  try {
    document = parse(query, { maxTokens: policy.maxTokens, noLocation: true });
  } catch {
    return null;
  }
  const subscribes = document.definitions.some(
    (definition) =>
      definition.kind === Kind.OPERATION_DEFINITION && definition.operation === OperationTypeNode.SUBSCRIPTION,
  );
  if (subscribes)
    return new AppError(
      "VALIDATION_FAILED",
      "Subscriptions run over the websocket at /graphql (graphql-transport-ws), not over HTTP",
    );
  try {
    checkFieldComparisons(document);
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  return null;
}

const CACHE_VERSION = Symbol("responseCacheVersion");
const BODY_TEXT = Symbol("bodyText");
const TEXT_HIT = Symbol("responseCacheTextHit");
type CachingRequest = FastifyRequest & {
  [CACHE_VERSION]?: number;
  [BODY_TEXT]?: string;
  [TEXT_HIT]?: CachedResponse;
};

/**
 * Answers repeated read-only operations from the response cache before Apollo sees them, and keeps
 * Apollo's answers to cacheable ones. Registered before Apollo's route so its hooks apply to it. A
 * POST body sent before in exactly the same text is answered without being parsed: its JSON parser
 * (this scope's own) looks the text up first. Only a body that was admitted, parsed and answered is
 * kept by its text, and the same text is admitted and parsed the same way again. `isKeyed`: whether
 * the request's key authenticated (a request without one is answered only with answers given to
 * such requests).
 */
function serveFromCache(
  app: FastifyInstance,
  cache: ResponseCache,
  isKeyed: (request: FastifyRequest) => boolean,
): void {
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request: CachingRequest, body, done) => {
    let text: string;
    try {
      text = decodeJsonText(body as Buffer);
    } catch (error) {
      return done(error as Error, undefined);
    }
    if (request.method === "POST") {
      const hit = cache.getByText(text, request.headers.accept ?? "", { anonymous: !isKeyed(request) });
      if (hit) {
        request[TEXT_HIT] = hit;
        return done(null, undefined);
      }
      request[BODY_TEXT] = text;
    }
    parseJsonBodyInto(text, done);
  });
  app.addHook("preHandler", (request: CachingRequest, reply, done) => {
    if (request.method !== "POST") return done();
    const hit =
      request[TEXT_HIT] ??
      cache.get(request.body as GraphQLRequestBody, request.headers.accept ?? "", { anonymous: !isKeyed(request) });
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
      cache.store(
        request.body as GraphQLRequestBody,
        request.headers.accept ?? "",
        version,
        { contentType, body: payload },
        request[BODY_TEXT],
        { anonymous: !isKeyed(request) },
      );
    }
    return payload;
  });
}
