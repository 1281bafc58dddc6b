import { type Span, SpanStatusCode } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_FULL,
} from "@opentelemetry/semantic-conventions";
import { startClientSpan, tracingOn } from "./spans";

/**
 * The CLIENT span of one delivery attempt (a webhook POST, a ONE Record notification's POSTs),
 * continuing the trace of the ingestion that queued the delivery (`traceParent`, stored with it), and
 * the headers that carry the span to the receiver (`traceparent`). Undefined with tracing off: no
 * span, no header.
 */
export function startWebhookSpan(
  delivery: {
    id: string;
    callback: string;
    attemptCount: number;
    traceParent?: string | null | undefined;
  },
  name = "webhook POST",
): { span: Span; headers: Record<string, string> } | undefined {
  if (!tracingOn()) return undefined;
  let target: URL | undefined;
  try {
    target = new URL(delivery.callback);
  } catch {
    target = undefined; // the send reports it
  }
  return startClientSpan(name, delivery.traceParent, {
    [ATTR_HTTP_REQUEST_METHOD]: "POST",
    // Without the query string and credentials: a receiver may have put a token there.
    ...(target
      ? {
          [ATTR_URL_FULL]: `${target.origin}${target.pathname}`,
          [ATTR_SERVER_ADDRESS]: target.hostname,
          [ATTR_SERVER_PORT]: Number(target.port || (target.protocol === "https:" ? 443 : 80)),
        }
      : {}),
    ...(delivery.attemptCount > 0 ? { [ATTR_HTTP_REQUEST_RESEND_COUNT]: delivery.attemptCount } : {}),
    "cargo.delivery.id": delivery.id,
    "cargo.delivery.attempt": delivery.attemptCount + 1,
  });
}

/** Ends the span with the send's outcome: an answer other than 2xx, or none, marks it as failed. */
export function endWebhookSpan(span: Span, statusCode: number | null, error: string | null): void {
  if (statusCode !== null) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, statusCode);
  if (error !== null) {
    span.setAttribute(ATTR_ERROR_TYPE, statusCode !== null ? String(statusCode) : error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error });
  }
  span.end();
}
