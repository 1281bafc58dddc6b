import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../errors";
import { parseJsonBytesInto } from "../http/json-body";
import { asAppError } from "../http/problem";
import { apiErrorBody } from "./api-error";
import { createBodyGate } from "./body-gate";
import type { OneRecordCallers } from "./identity/caller";
import { CONTENT_LANGUAGE, JSON_LD, negotiateApiVersion, SUPPORTED_API_VERSIONS } from "./negotiation";
import { rememberApiVersion, rememberOneRecordCaller, sendJsonLd } from "./onerecord-http";
import { registerServerInformationRoutes } from "./server-information.routes";
import type { OneRecordUris } from "./uris";
import type { ActionRequestKind } from "./action-request-kinds";
import { registerActionRequestRoutes } from "./objects/action-requests.routes";
import { registerObjectRoutes } from "./objects/objects.routes";
import type { ObjectService } from "./objects/objects.service";
import type { EventsService } from "./events/events.service";
import { registerEventRoutes } from "./events/events.routes";

/**
 * What the ONE Record routes are given (built in composition/mount-onerecord.ts). A route file takes
 * the members it uses; a new one adds its service here.
 */
export interface OneRecordRouteDeps {
  /** config.oneRecord.basePath: where the plugin is mounted ("/onerecord"). */
  readonly basePath: string;
  readonly uris: OneRecordUris;
  readonly callers: OneRecordCallers;
  readonly objects: ObjectService;
  readonly events: EventsService;
  /** Action requests other than change requests (subscription requests, access delegations). */
  readonly actionRequestKinds?: readonly ActionRequestKind[];
  /**
   * More routes inside the plugin (part 2's resources: subscriptions, notifications, access
   * delegations): each registers its own on the scope, so they share its authentication, body parsing,
   * negotiation and api:Error answers.
   */
  readonly moreRoutes?: ReadonlyArray<(scope: FastifyInstance) => void>;
}

/**
 * The ONE Record API, one encapsulated plugin under the base path: JSON-LD bodies only (415 for
 * any other), the Accept header negotiated before anything else (406), every caller authenticated
 * by the plugin's own hook (an API key or an access token: `oneRecordCallerOf(request)` in the
 * handlers), every route declared `auth: "onerecord"` (route-access.ts) and every error an api:Error.
 */
/** An error answered outside the plugin (a URL the router refuses under the base path), as api:Error. */
export function sendOneRecordRefusal(reply: FastifyReply, error: AppError): void {
  void sendJsonLd(reply, error.status, apiErrorBody(error));
}

export async function registerOneRecordRoutes(http: FastifyInstance, deps: OneRecordRouteDeps): Promise<void> {
  await http.register(
    async (scope) => {
      const routes: Array<{ methods: string[]; pattern: RegExp }> = [];
      scope.addHook("onRoute", (route) => {
        route.config = { ...route.config, auth: "onerecord" };
        // Not in /openapi.json, whose errors are problem+json: docs/ONE-RECORD.md describes this API.
        route.schema = { ...route.schema, hide: true };
        routes.push({ methods: methodsOf(route.method), pattern: patternOf(route.url) });
      });

      scope.removeAllContentTypeParsers();
      // Bytes, not a string: Fastify's decoding would turn invalid UTF-8 into U+FFFD and store it; the
      // specification wants such a body refused.
      scope.addContentTypeParser(JSON_LD, { parseAs: "buffer" }, (_request, body, done) =>
        parseJsonBytesInto(body as Buffer, done),
      );

      scope.addHook("onRequest", (request, reply, done) => {
        // Every answer, errors and bodiless ones (204, 307) included, is in the one language.
        reply.header("content-language", CONTENT_LANGUAGE);
        const version = negotiateApiVersion(request.headers.accept);
        if (version === undefined) return done(notAcceptable(request.headers.accept));
        rememberApiVersion(request, version);
        // A DELETE takes no body: a Content-Type a client sends with none names nothing to parse (not 415).
        if (request.method === "DELETE" && hasNoBody(request)) delete request.headers["content-type"];
        done();
      });
      // After the body is read (a malformed one is 400 first, as on the REST routes), before the handler.
      scope.addHook("preValidation", async (request) => {
        rememberOneRecordCaller(request, await deps.callers.resolve(request.headers.authorization, request.ip));
        checkRequestText(request);
      });
      // A request with a body waits for its turn once the body has arrived, so a client sending slowly
      // holds no place (body-gate.ts). Finished, failed or given up by the client, the response closes.
      const gate = createBodyGate();
      scope.addHook("preHandler", async (request, reply) => {
        if (request.body === undefined) return;
        // A client gone while it waited (here or for its caller to be known) gets no work done for it.
        if (reply.raw.closed) return reply.hijack();
        const { turn, leave } = gate.join();
        reply.raw.once("close", leave);
        if (!(await turn)) reply.hijack();
      });

      scope.setErrorHandler(async (error, request, reply) => {
        const appError = oneRecordError(error, request);
        if (appError.code === "INTERNAL") request.log.error({ err: error }, "unexpected failure");
        else if (appError.status >= 500) request.log.warn({ err: error, code: appError.code }, appError.message);
        if (appError.retryAfterSeconds !== undefined)
          reply.header("retry-after", String(Math.ceil(appError.retryAfterSeconds)));
        const resource = appError.extensions?.resource;
        return sendJsonLd(
          reply,
          appError.status,
          apiErrorBody(appError, typeof resource === "string" ? resource : undefined),
        );
      });

      // A path of the API that exists under other methods answers 405 with Allow, as the server's others.
      scope.setNotFoundHandler((request, reply) => {
        const path = request.url.split("?")[0]!;
        const allowed = new Set(routes.filter((r) => r.pattern.test(path)).flatMap((r) => r.methods));
        if (allowed.size === 0) throw new AppError("NOT_FOUND", `No ONE Record resource at ${path}`);
        const allow = [...allowed].sort().join(", ");
        reply.header("allow", allow);
        throw new AppError("METHOD_NOT_ALLOWED", `${path} does not take ${request.method}; it takes ${allow}`);
      });

      registerServerInformationRoutes(scope, deps);
      // Each part of the API registers its routes here.
      registerObjectRoutes(scope, deps);
      registerActionRequestRoutes(scope, deps);
      registerEventRoutes(scope, deps);
      for (const register of deps.moreRoutes ?? []) register(scope);
    },
    { prefix: deps.basePath },
  );
}

function oneRecordError(error: unknown, request: FastifyRequest): AppError {
  const code = (error as { code?: unknown }).code;
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE")
    return new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content-Type "${request.headers["content-type"] ?? ""}" is not supported; send ${JSON_LD}`,
    );
  return asAppError(error, request);
}

function hasNoBody(request: FastifyRequest): boolean {
  const length = request.headers["content-length"];
  return request.headers["transfer-encoding"] === undefined && (length === undefined || length === "0");
}

// Control characters (NUL included) and lone UTF-16 surrogates (with the u flag a whole pair is one
// code point, which the class does not match): in no id and no query value this API takes.
const UNREADABLE_TEXT = /\p{Cc}|[\uD800-\uDFFF]/u;

/**
 * An id in the path with such characters names nothing this server holds (404); a query value with
 * them is no value any parameter takes (400). Refused here, before they reach a database.
 */
function checkRequestText(request: FastifyRequest): void {
  for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, unknown>))
    if (typeof value === "string" && UNREADABLE_TEXT.test(value))
      throw new AppError(
        notFoundCodeOf(name, request),
        `No resource at ${request.url.split("?")[0]}: an id holds no control characters`,
      );
  for (const [name, value] of Object.entries((request.query ?? {}) as Record<string, unknown>))
    for (const text of [name, ...(Array.isArray(value) ? (value as unknown[]) : [value])])
      if (typeof text === "string" && UNREADABLE_TEXT.test(text))
        throw new AppError("INVALID_QUERY_PARAMETER", `${name} holds a control character`, {
          errors: [{ field: name, message: "holds a control character" }],
        });
}

function notFoundCodeOf(param: string, request: FastifyRequest) {
  if (param === "eventId") return "LOGISTICS_EVENT_NOT_FOUND";
  return (request.routeOptions.url ?? "").includes("/action-requests/")
    ? "ACTION_REQUEST_NOT_FOUND"
    : "LOGISTICS_OBJECT_NOT_FOUND";
}

function notAcceptable(accept: string | undefined): AppError {
  return new AppError(
    "NOT_ACCEPTABLE",
    `Accept "${accept}" names nothing this server answers: it answers ${JSON_LD} in versions ${SUPPORTED_API_VERSIONS.join(", ")}`,
  );
}

function methodsOf(method: string | string[]): string[] {
  return (Array.isArray(method) ? method : [method]).map(String);
}

function patternOf(url: string): RegExp {
  return new RegExp(`^${url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/:[A-Za-z0-9_]+/g, "[^/]+")}/?$`);
}
