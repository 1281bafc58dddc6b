/** CONTRACT §7: a notification succeeds with a 2xx within 10 s. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * Time kept at the end of a lease, meant for recording an attempt's outcome after its send timed out.
 * A margin, not a limit: an outcome recorded later is fenced out and the delivery is sent again.
 */
export const RECORD_MARGIN_MS = 2_000;
/** The part of a lease one send may use: it starts only while this much is left. */
export const SEND_BUDGET_MS = DELIVERY_TIMEOUT_MS + RECORD_MARGIN_MS;
/** The shortest lease accepted: the send budget plus at least 3 s in which queued claims can start. */
export const MIN_LEASE_MS = SEND_BUDGET_MS + 3_000;
