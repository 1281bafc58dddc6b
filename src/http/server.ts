import { createServer, type IncomingMessage, type RequestListener, type Server } from "node:http";
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyServerFactory,
  type FastifyServerOptions,
} from "fastify";
import type { Logger } from "pino";
import type { Socket } from "node:net";
import { AppError } from "../errors";
import { AccessLog, accessLineWriter, lazyRequestLogger } from "./request-log";
import { type FastAccessLog, FastLane, setFastLane } from "./fast-lane";
import { requestIdOf, securityHeaders } from "./request-id";
import { asAppError, rawProblemResponse, sendProblem } from "./problem";
import { buildSerializer, buildValidator } from "./compilers";
import type { RequestTracing } from "../tracing/http-server";
import type { ClientAddress } from "./client-address";
import { parseJsonBytesInto } from "./json-body";
import { isSchemaRefusal, refusal } from "./validation";

type RefusalAnswer = (reply: FastifyReply, error: AppError) => void;
/** Per server: APIs mounted under a path prefix that answer the router's refusals in a format of their own. */
const refusalAnswers = new WeakMap<FastifyInstance, Array<{ prefix: string; answer: RefusalAnswer }>>();

/**
 * URLs under `prefix` that the router refuses before any route or hook of the API runs (bad
 * percent-encoding, a segment over 200 characters) are answered by `answer` instead of problem+json:
 * for an API whose errors have another shape (the ONE Record API's api:Error).
 */
export function answerRouterRefusalsUnder(app: FastifyInstance, prefix: string, answer: RefusalAnswer): void {
  const answers = refusalAnswers.get(app) ?? [];
  answers.push({ prefix, answer });
  refusalAnswers.set(app, answers);
}

/** JSON bodies up to 1 MiB (CONTRACT §10). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * The Fastify instance with the contract's error handling; routes are registered by the caller. With
 * `tracing`, each request runs inside its span (tracing/http-server.ts).
 */
export function createHttpServer(
  logger: Logger,
  { clientAddress, tracing }: { clientAddress?: ClientAddress; tracing?: RequestTracing } = {},
): FastifyInstance {
  const loggerInstance: FastifyBaseLogger = logger;
  const lane = new FastLane(fastAccessLog(logger, clientAddress?.addressOf));
  const app = Fastify({
    loggerInstance,
    ...(tracing ? { serverFactory: tracedServerFactory(tracing) } : {}),
    // request.ip: the peer, or the client a trusted proxy names (client-address.ts, TRUST_PROXY).
    ...(clientAddress?.trust ? { trustProxy: clientAddress.trust } : {}),
    logController: new AccessLog(logger),
    childLoggerFactory: (parent, bindings, options) => lazyRequestLogger(parent as Logger, bindings, options),
    bodyLimit: BODY_LIMIT_BYTES,
    // Keep-alive sockets with nothing in flight are closed at once on shutdown; busy ones drain.
    forceCloseConnections: "idle",
    return503OnClosing: true,
    requestTimeout: 30_000,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    genReqId: requestIdOf,
    // Route schemas do the work: ajv validates params, query strings and bodies against them before the
    // handler runs, and fast-json-stringify writes each JSON answer from its response schema — Fastify's
    // own compilers (compilers.ts says how they are set up). The same schemas are the OpenAPI document.
    ajv: { customOptions: { allErrors: true, coerceTypes: false, removeAdditional: false, allowUnionTypes: true } },
    schemaController: { compilersFactory: { buildValidator: buildValidator(), buildSerializer: buildSerializer() } },
    // Requests Node cannot even parse (headers over 16 KiB, broken HTTP) still get problem+json.
    clientErrorHandler: (error, socket) => answerClientError(error as NodeJS.ErrnoException, socket),
    // URLs the router refuses before any route (bad percent-encoding, a segment over maxParamLength).
    frameworkErrors: (error, request, reply) => {
      const detail =
        error.code === "FST_ERR_MAX_PARAM_LENGTH"
          ? "A path segment is longer than 200 characters"
          : "The URL is not valid (bad percent-encoding)";
      const refusal = new AppError("VALIDATION_FAILED", detail);
      const path = request.url.split("?")[0]!;
      const own = refusalAnswers.get(app)?.find(({ prefix }) => path === prefix || path.startsWith(`${prefix}/`));
      if (own) own.answer(reply, refusal);
      else void sendProblem(reply, refusal);
    },
  });

  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (_request, body, done) =>
    parseJsonBytesInto(body as Buffer, done),
  );

  // The lane goes in front of Fastify's own handler on the server Fastify made (a server factory would
  // make Fastify bind one address only, e.g. for HOST=localhost). Not while tracing, so that every
  // request runs in its span, nor at debug, where every arrival is logged by Fastify's path.
  if (!tracing && !logger.isLevelEnabled("debug")) {
    const [handler] = app.server.listeners("request") as RequestListener[];
    app.server.removeListener("request", handler!);
    app.server.on("request", laneFirst(lane, handler!));
  }
  setFastLane(app, lane);
  // Fastify answers 503 once closing; the lane leaves every request to it from then on.
  app.addHook("preClose", (done) => {
    lane.close();
    done();
  });
  // A callback hook, not an async one: this runs on every request and a promise per request shows.
  app.addHook("onRequest", (request, reply, done) => {
    reply.headers(securityHeaders(String(request.id)));
    done();
  });
  // Before authentication and validation: a refused request's span is named too.
  if (tracing) app.addHook("onRequest", tracing.nameAfterRoute);

  app.setErrorHandler(async (error, request, reply) => {
    // A request its schema refused is explained by the route's own reading of it (validation.ts).
    const appError = isSchemaRefusal(error) ? await refusal(error, request) : asAppError(error, request);
    if (appError.code === "INTERNAL") request.log.error({ err: error }, "unexpected failure");
    else if (appError.status >= 500) request.log.warn({ err: error, code: appError.code }, appError.message);
    return sendProblem(reply, appError);
  });

  // A path that exists under other methods answers 405 with Allow (RFC 9110 §15.5.6), not 404.
  const routes: Array<{ methods: string[]; pattern: RegExp }> = [];
  app.addHook("onRoute", (route) => {
    const methods = (Array.isArray(route.method) ? route.method : [route.method]).map(String);
    const pattern = new RegExp(
      `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`,
    );
    routes.push({ methods, pattern });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0]!;
    const allowed = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
    if (allowed.size > 0) {
      const allow = [...allowed].sort().join(", ");
      reply.header("allow", allow);
      return sendProblem(
        reply,
        new AppError("METHOD_NOT_ALLOWED", `${path} does not take ${request.method}; it takes ${allow}`),
      );
    }
    return sendProblem(reply, new AppError("NOT_FOUND", `No route for ${request.method} ${path}`));
  });

  return app;
}

/**
 * The HTTP/1.1 server Fastify would make, with its request handler run inside the request's span.
 * (With a server factory Fastify binds one address only: HOST=localhost listens on the first address
 * the name resolves to.)
 */
function tracedServerFactory(tracing: RequestTracing): FastifyServerFactory<Server> {
  return (handler, options) => {
    const timeouts = options as Required<
      Pick<FastifyServerOptions, "keepAliveTimeout" | "requestTimeout" | "connectionTimeout" | "maxRequestsPerSocket">
    >;
    const server = createServer(tracing.wrap(handler));
    server.keepAliveTimeout = timeouts.keepAliveTimeout;
    server.requestTimeout = timeouts.requestTimeout;
    server.setTimeout(timeouts.connectionTimeout);
    if (timeouts.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = timeouts.maxRequestsPerSocket;
    return server;
  };
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const appError =
    error.code === "HPE_HEADER_OVERFLOW"
      ? new AppError("HEADERS_TOO_LARGE", "The request headers exceed 16 KiB")
      : new AppError("VALIDATION_FAILED", "The request is not valid HTTP/1.1");
  socket.end(rawProblemResponse(appError));
}

function laneFirst(lane: FastLane, handler: RequestListener): RequestListener {
  return (request, response) => {
    if (!lane.answer(request, response)) handler(request, response);
  };
}

/** The access line of a fast-lane answer, with the client address Fastify's `request.ip` would give. */
function fastAccessLog(
  logger: Logger,
  addressOf: ((request: IncomingMessage) => string | undefined) | undefined,
): FastAccessLog | undefined {
  const write = accessLineWriter(logger);
  if (!write) return undefined;
  const ipOf = addressOf ?? ((request: IncomingMessage) => request.socket.remoteAddress);
  return (request, { id, route, statusCode, elapsedMs }) =>
    write(request, {
      id,
      method: request.method!,
      url: request.url!,
      route,
      ip: ipOf(request),
      statusCode,
      elapsedMs,
    });
}
