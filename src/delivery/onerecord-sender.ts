import type { TokenClient } from "../outbound/token-client";
import type { SendResult } from "./attempt-outcome";
import type { ClaimedDelivery } from "./delivery.store";
import { type Outbound, postPayload, timedAttempt } from "./post-attempt";

/** The media type of ONE Record 2.3.0 bodies, sent as Content-Type and asked for as Accept. */
export const ONE_RECORD_MEDIA_TYPE = "application/ld+json; version=2.3.0";
const USER_AGENT = "cargo-gateway/1.0 (ONE Record notification)";

/**
 * Where a notification to a URL may go (partners/partner-servers.ts targetOf): a registered partner's
 * server, `audience` that of the tokens it is sent (null: the settings' default); or, `anonymous`, a
 * server no operator registered that a holder accepted a third party's subscription for, sent no
 * token; undefined: nowhere.
 */
export type PartnerOfUrl = (
  url: string,
) => Promise<{ readonly audience: string | null; readonly anonymous: boolean } | undefined>;

/**
 * POSTs one ONE Record api:Notification (the delivery's payload, fixed when it was queued) to the
 * subscriber's notifications endpoint. `Notification-Id` is the delivery's id, the same on every
 * attempt: the subscriber deduplicates by it. A notification goes only where `partnerOf` says: to any
 * other URL nothing is sent, and the attempt fails; to an anonymous target, no token. With `tokens`, the
 * request carries `Authorization: Bearer` with a token of that partner's audience; after a 401 it
 * POSTs once more in the same attempt only with another token than the refused one (the token
 * client decides whether the refused one is forgotten: a second 401, or a refusal it does not act
 * on, is the attempt's answer). Without `tokens`, nothing authenticates the request. The attempt,
 * token requests included, ends within DELIVERY_TIMEOUT_MS. Never throws.
 */
export function sendOneRecordNotification(
  delivery: ClaimedDelivery,
  { tokens, partnerOf, ...outbound }: Outbound & { tokens: TokenClient | undefined; partnerOf: PartnerOfUrl },
): Promise<SendResult> {
  return timedAttempt(delivery, "ONE Record notification POST", async (traceHeaders, signal) => {
    const partner = await partnerOf(delivery.callback);
    // Never a token, nor a request, to a server the operator did not register (an endpoint queued
    // before its partner was removed): the notification waits for its partner, as its retries allow.
    if (partner === undefined)
      throw new Error(
        `${delivery.callback} is on no registered ONE Record partner's server and no accepted third party's`,
      );
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
    if (!tokens || partner.anonymous) return post(undefined);
    const audience = partner.audience ?? undefined;
    const first = await tokens.token(signal, audience);
    const answer = await post(first);
    if (answer.statusCode !== 401) return answer;
    tokens.invalidate(first, audience);
    const fresh = await tokens.token(signal, audience);
    return fresh === first ? answer : post(fresh);
  });
}
