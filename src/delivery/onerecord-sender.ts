import type { TokenClient } from "../outbound/token-client";
import type { SendResult } from "./attempt-outcome";
import type { ClaimedDelivery } from "./delivery.store";
import { type Outbound, postPayload, timedAttempt } from "./post-attempt";

/** The media type of ONE Record 2.3.0 bodies, sent as Content-Type and asked for as Accept. */
export const ONE_RECORD_MEDIA_TYPE = "application/ld+json; version=2.3.0";
const USER_AGENT = "cargo-gateway/1.0 (ONE Record notification)";

/**
 * POSTs one ONE Record api:Notification (the delivery's payload, fixed when it was queued) to the
 * subscriber's notifications endpoint. `Notification-Id` is the delivery's id, the same on every
 * attempt: the subscriber deduplicates by it. With `tokens`, the request carries `Authorization:
 * Bearer` with the token client's token; a 401 answer makes it forget that token, take a fresh one
 * and POST once more in the same attempt (a second 401 is the attempt's answer: no loop). Without
 * `tokens`, nothing authenticates the request. The attempt, token requests included, ends within
 * DELIVERY_TIMEOUT_MS. Never throws.
 */
export function sendOneRecordNotification(
  delivery: ClaimedDelivery,
  { tokens, ...outbound }: Outbound & { tokens: TokenClient | undefined },
): Promise<SendResult> {
  return timedAttempt(delivery, "ONE Record notification POST", async (traceHeaders, signal) => {
    const post = (token: string | undefined) =>
      postPayload(
        delivery,
        {
          "content-type": ONE_RECORD_MEDIA_TYPE,
          accept: ONE_RECORD_MEDIA_TYPE,
          "user-agent": USER_AGENT,
          "notification-id": delivery.id,
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          ...traceHeaders,
        },
        outbound,
        signal,
      );
    if (!tokens) return post(undefined);
    const first = await tokens.token(signal);
    const answer = await post(first);
    if (answer.statusCode !== 401) return answer;
    tokens.invalidate(first);
    return post(await tokens.token(signal));
  });
}
