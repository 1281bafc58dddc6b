import { type Dispatcher, request } from "undici";
import { assertHostAllowed, forbiddenCause } from "../outbound/guarded-agent";
import { parseRetryAfter } from "./backoff";
import type { ClaimedDelivery } from "./delivery.store";
import type { SendResult } from "./attempt-outcome";
import { webhookSignatures } from "./notification";
import { endWebhookSpan, startWebhookSpan } from "../tracing/webhook-span";

import { DELIVERY_TIMEOUT_MS } from "../domain/delivery-timing";
import { causesOf } from "../domain/error-chain";

export { DELIVERY_TIMEOUT_MS };
const USER_AGENT = "cargo-gateway/1.0 (webhook delivery)";

/**
 * POSTs one signed notification, signed with each of `secrets` (the client's secrets valid now,
 * newest first). Never throws: every failure is described in the result. With tracing on, the POST
 * is a span continuing the ingestion's trace, and carries it to the receiver in `traceparent`.
 */
export async function sendNotification(
  delivery: ClaimedDelivery,
  secrets: readonly string[],
  { dispatcher, allowPrivate }: { dispatcher: Dispatcher; allowPrivate: boolean },
): Promise<SendResult> {
  const startedAt = new Date();
  const started = performance.now();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const traced = startWebhookSpan(delivery);
  const done = (statusCode: number | null, error: string | null, retryAfterMs: number | null = null): SendResult => {
    if (traced) endWebhookSpan(traced.span, statusCode, error);
    return { startedAt, durationMs: Math.round(performance.now() - started), statusCode, error, retryAfterMs };
  };
  try {
    assertHostAllowed(new URL(delivery.callback), allowPrivate);
    const response = await request(delivery.callback, {
      method: "POST",
      dispatcher,
      body: delivery.payload,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": delivery.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": webhookSignatures(secrets, delivery.id, timestamp, delivery.payload),
        ...traced?.headers,
      },
      headersTimeout: DELIVERY_TIMEOUT_MS,
      bodyTimeout: DELIVERY_TIMEOUT_MS,
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
    const ok = response.statusCode >= 200 && response.statusCode <= 299;
    return done(
      response.statusCode,
      ok ? null : `HTTP ${response.statusCode}`,
      parseRetryAfter(response.headers["retry-after"]),
    );
  } catch (error) {
    const forbidden = forbiddenCause(error);
    if (forbidden) return done(null, `address not allowed: ${forbidden.message}`);
    return done(null, describe(error));
  }
}

function describe(error: unknown): string {
  for (const e of causesOf(error, 5)) {
    if (e.name === "TimeoutError") return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
    const code = e.code as string | undefined;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
      return `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s`;
    if (code && code !== "UND_ERR_ABORTED") return code;
  }
  return (error as Error).message ?? "request failed";
}
