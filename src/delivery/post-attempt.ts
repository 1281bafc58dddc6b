import { type Dispatcher, request } from "undici";
import { DELIVERY_TIMEOUT_MS } from "../domain/delivery-timing";
import { assertHostAllowed, forbiddenCause } from "../outbound/guarded-agent";
import { describeRequestFailure } from "../outbound/request-failure";
import { TokenEndpointError } from "../outbound/token-client";
import { endWebhookSpan, startWebhookSpan } from "../tracing/webhook-span";
import type { SendResult } from "./attempt-outcome";
import { parseRetryAfter } from "./backoff";
import type { ClaimedDelivery } from "./delivery.store";

/** How a send reaches a receiver: the guarded agent, and whether private addresses are allowed (ALLOW_PRIVATE_CALLBACKS). */
export interface Outbound {
  dispatcher: Dispatcher;
  allowPrivate: boolean;
}

/** What a receiver answered one POST. */
export interface PostAnswer {
  statusCode: number;
  retryAfterMs: number | null;
}

/**
 * POSTs the delivery's payload to its callback with `headers`, the address policy applied (an IP
 * literal here, a name on connect); throws what failed. The answer's body is read (up to 64 KiB) and
 * dropped, so the connection can be kept.
 */
export async function postPayload(
  delivery: Pick<ClaimedDelivery, "callback" | "payload">,
  headers: Record<string, string>,
  { dispatcher, allowPrivate }: Outbound,
  signal: AbortSignal,
): Promise<PostAnswer> {
  assertHostAllowed(new URL(delivery.callback), allowPrivate);
  const response = await request(delivery.callback, {
    method: "POST",
    dispatcher,
    body: delivery.payload,
    headers,
    headersTimeout: DELIVERY_TIMEOUT_MS,
    bodyTimeout: DELIVERY_TIMEOUT_MS,
    signal,
  });
  await response.body.dump({ limit: 64 * 1024 }).catch(() => {});
  return { statusCode: response.statusCode, retryAfterMs: parseRetryAfter(response.headers["retry-after"]) };
}

/**
 * One attempt, timed and described: `run` makes its POSTs under `signal`, which ends the whole
 * attempt after DELIVERY_TIMEOUT_MS (so an attempt of several requests fits the lease's send budget
 * as one does). Never throws: a failure becomes the result's `error`. With tracing on, the attempt is
 * a CLIENT span named `spanName` continuing the ingestion's trace, and `run` gets the headers that
 * carry it (`traceparent`).
 */
export async function timedAttempt(
  delivery: ClaimedDelivery,
  spanName: string,
  run: (traceHeaders: Record<string, string>, signal: AbortSignal) => Promise<PostAnswer>,
): Promise<SendResult> {
  const startedAt = new Date();
  const started = performance.now();
  const traced = startWebhookSpan(delivery, spanName);
  const done = (
    statusCode: number | null,
    error: string | null,
    retryAfterMs: number | null = null,
    more: Partial<SendResult> = {},
  ): SendResult => {
    if (traced) endWebhookSpan(traced.span, statusCode, error);
    return { startedAt, durationMs: Math.round(performance.now() - started), statusCode, error, retryAfterMs, ...more };
  };
  try {
    const answer = await run(traced?.headers ?? {}, AbortSignal.timeout(DELIVERY_TIMEOUT_MS));
    const ok = answer.statusCode >= 200 && answer.statusCode <= 299;
    return done(answer.statusCode, ok ? null : `HTTP ${answer.statusCode}`, answer.retryAfterMs);
  } catch (error) {
    const forbidden = forbiddenCause(error);
    if (forbidden) return done(null, `address not allowed: ${forbidden.message}`);
    if (error instanceof TokenEndpointError)
      return done(null, `no access token: ${error.message}`, null, { noToken: true });
    return done(null, describeRequestFailure(error, DELIVERY_TIMEOUT_MS));
  }
}
