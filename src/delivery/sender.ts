import type { ClaimedDelivery } from "./delivery.store";
import type { SendResult } from "./attempt-outcome";
import { webhookSignatures } from "./notification";
import { type Outbound, postPayload, timedAttempt } from "./post-attempt";

const USER_AGENT = "cargo-gateway/1.0 (webhook delivery)";

/**
 * POSTs one signed notification, signed with each of `secrets` (the client's secrets valid now,
 * newest first). Never throws: every failure is described in the result. With tracing on, the POST
 * is a span continuing the ingestion's trace, and carries it to the receiver in `traceparent`.
 */
export function sendNotification(
  delivery: ClaimedDelivery,
  secrets: readonly string[],
  outbound: Outbound,
): Promise<SendResult> {
  return timedAttempt(delivery, "webhook POST", (traceHeaders, signal) => {
    const timestamp = Math.floor(Date.now() / 1000);
    return postPayload(
      delivery,
      {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "webhook-id": delivery.id,
        "webhook-timestamp": String(timestamp),
        "webhook-signature": webhookSignatures(secrets, delivery.id, timestamp, delivery.payload),
        ...traceHeaders,
      },
      outbound,
      signal,
    );
  });
}
