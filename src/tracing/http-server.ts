import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from "@opentelemetry/api";
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
import type { onRequestHookHandler } from "fastify";
import { activeTracer, isSampled } from "./spans";

const serverSpans = new WeakMap<IncomingMessage, Span>();

/** How the HTTP server traces its requests (http/server.ts applies it). */
export interface RequestTracing {
  /**
   * Fastify's request handler, run inside a new SERVER span continuing the caller's `traceparent`
   * when it sends a valid one: everything Fastify does for the request (hooks, handler, Apollo, the
   * services) runs inside it. Ended when the response closes. Websocket upgrades are not requests
   * and get no span.
   */
  wrap: (handler: RequestListener) => RequestListener;
  /** An `onRequest` hook naming the request's span after the route that matched. */
  nameAfterRoute: onRequestHookHandler;
}

/** The tracing of HTTP requests, or undefined while tracing is off: call it after tracing started. */
export function requestTracing(): RequestTracing | undefined {
  const tracer = activeTracer();
  if (tracer === undefined) return undefined;
  return {
    wrap: (handler) => (req, res) => {
      const { span, parent } = startServerSpan(tracer, req, res);
      context.with(trace.setSpan(parent, span), handler, undefined, req, res);
    },
    nameAfterRoute: (request, _reply, done) => {
      const route = request.routeOptions.url;
      const span = serverSpans.get(request.raw);
      if (span !== undefined && route !== undefined) {
        span.updateName(`${request.method} ${route}`);
        span.setAttribute(ATTR_HTTP_ROUTE, route);
      }
      done();
    },
  };
}

/** The request's SERVER span, ended when its response closes, and the context of the trace it continues. */
function startServerSpan(tracer: Tracer, req: IncomingMessage, res: ServerResponse) {
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
  return { span, parent };
}

/** The ids of the request's SERVER span for its access line, when the span is sampled (one a collector will hold). */
export function serverTraceIds(req: IncomingMessage): { traceId: string; spanId: string } | undefined {
  const span = serverSpans.get(req);
  if (span === undefined || !isSampled(span)) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { traceId, spanId };
}
