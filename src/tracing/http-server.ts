import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { context, propagation, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  ATTR_CLIENT_ADDRESS,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from "@opentelemetry/semantic-conventions";
import type { FastifyInstance } from "fastify";
import { activeTracer, isSampled } from "./spans";

const serverSpans = new WeakMap<IncomingMessage, Span>();

/**
 * A SERVER span for every HTTP request the server reads, continuing the caller's `traceparent`
 * when it sends a valid one. The span is made active around Node's `request` event, so everything
 * Fastify does for the request (hooks, handler, Apollo, the services) runs inside it; Fastify's
 * `onRequest` names it after the route that matched. Ended when the response closes. Does nothing
 * while tracing is off: call it after tracing started, before the server listens. Websocket
 * upgrades are not requests and get no span.
 */
export function traceHttpServer(app: FastifyInstance): void {
  const tracer = activeTracer();
  if (tracer === undefined) return;
  const server: Server = app.server;
  const emit: (event: string, ...args: unknown[]) => boolean = server.emit.bind(server);
  server.emit = function (event: string, ...args: unknown[]): boolean {
    if (event !== "request") return emit(event, ...args);
    const [req, res] = args as [IncomingMessage, ServerResponse];
    const method = req.method ?? "GET";
    const url = req.url ?? "/";
    const query = url.indexOf("?");
    const userAgent = req.headers["user-agent"];
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: query < 0 ? url : url.slice(0, query),
          [ATTR_URL_SCHEME]: "http",
          ...(req.socket.remoteAddress ? { [ATTR_CLIENT_ADDRESS]: req.socket.remoteAddress } : {}),
          ...(userAgent ? { [ATTR_USER_AGENT_ORIGINAL]: userAgent } : {}),
        },
      },
      parent,
    );
    serverSpans.set(req, span);
    res.once("close", () => {
      span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.statusCode);
      if (!res.writableFinished) {
        span.setAttribute(ATTR_ERROR_TYPE, "aborted");
        span.setStatus({ code: SpanStatusCode.ERROR, message: "closed before the answer was sent" });
      } else if (res.statusCode >= 500) {
        span.setAttribute(ATTR_ERROR_TYPE, String(res.statusCode));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    });
    return context.with(trace.setSpan(parent, span), () => emit(event, ...args));
  } as Server["emit"];
  // Added after the routes, it still runs for all of them (Fastify attaches hooks when it is ready),
  // before authentication and validation: a refused request's span is named too.
  app.addHook("onRequest", (request, _reply, done) => {
    const route = request.routeOptions.url;
    const span = serverSpans.get(request.raw);
    if (span !== undefined && route !== undefined) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute(ATTR_HTTP_ROUTE, route);
    }
    done();
  });
}

/** The ids of the request's SERVER span for its access line, when the span is sampled (one a collector will hold). */
export function serverTraceIds(req: IncomingMessage): { traceId: string; spanId: string } | undefined {
  const span = serverSpans.get(req);
  if (span === undefined || !isSampled(span)) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
