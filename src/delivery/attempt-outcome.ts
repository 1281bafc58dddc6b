import { retryDelayMs } from "./backoff";
import type { DeliveryOutcome } from "./delivery.metrics";
import type { AttemptOutcome, ClaimedDelivery } from "./delivery.store";

/** What one send did (sender.ts makes it): the worker records it as the attempt's outcome. */
export interface SendResult {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  retryAfterMs: number | null;
  /**
   * The token endpoint gave no access token (a ONE Record notification): nothing was sent, and the
   * receiver's origin is not to blame, so its circuit does not count the attempt. It is still a
   * failed attempt of the delivery (retried on the schedule).
   */
  noToken?: boolean;
}

/** An attempt's outcome: the delivery's new state to record, and the kind counted in metrics. */
export interface DecidedOutcome {
  outcome: AttemptOutcome;
  kind: DeliveryOutcome;
}

/**
 * What a send's result makes of its delivery: delivered on a 2xx; dead on 410 (the receiver says this
 * callback will never take notifications again); otherwise pending, due again after the schedule's
 * wait (at least the receiver's Retry-After). A webhook is dead when the schedule has no retry left; a
 * ONE Record notification is kept until its subscriber confirms it (the specification's MUST), retried
 * at the schedule's last wait: the claim hands it out only while its subscription is accepted and
 * unexpired, and auto-disable parks it (DELIVERY_DISABLE_AFTER_HOURS).
 */
export function decideOutcome(
  delivery: ClaimedDelivery,
  result: SendResult,
  retrySchedule: readonly number[],
  nowMs = Date.now(),
  random = Math.random,
): DecidedOutcome {
  const attempts = delivery.attemptCount + 1;
  const base = {
    deliveryId: delivery.id,
    leaseToken: delivery.leaseToken,
    startedAt: result.startedAt,
    durationMs: result.durationMs,
    statusCode: result.statusCode,
    error: result.error,
  };
  if (result.statusCode !== null && result.statusCode >= 200 && result.statusCode <= 299)
    return { outcome: { ...base, status: "DELIVERED", nextAttemptAt: null }, kind: "delivered" };
  if (result.statusCode === 410) return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "gone" };
  if (attempts > retrySchedule.length && delivery.kind !== "ONE_RECORD")
    return { outcome: { ...base, status: "DEAD", nextAttemptAt: null }, kind: "dead" };
  const delay = retryDelayMs(retrySchedule, attempts, result.retryAfterMs, random);
  return { outcome: { ...base, status: "PENDING", nextAttemptAt: new Date(nowMs + delay) }, kind: "retry" };
}
