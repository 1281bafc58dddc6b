import type { FieldError } from "./checker";

/** The ids this service hands out (subscriptions, deliveries) are UUIDs. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** A subscription id as given, lower-cased; or the problem with it (reported under `field`). */
export function checkSubscriptionId(
  value: unknown,
  field = "subscriptionId",
): { id: string } | { problem: FieldError } {
  if (typeof value !== "string" || !UUID_PATTERN.test(value))
    return { problem: { field, message: `must be a subscription id (a UUID), got ${JSON.stringify(value)}` } };
  return { id: value.toLowerCase() };
}
