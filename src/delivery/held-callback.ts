/**
 * Callbacks that name no receiver yet: a delivery queued to one waits PARKED, claimed by nothing,
 * until whoever made it points it at a real URL (queue-deliveries.sql.ts). ONE Record uses them for
 * an Organization no operator said receives notifications (onerecord/partners/notification-endpoint.ts).
 */
export const HELD_CALLBACK_PREFIX = "urn:cargo-gateway:held:";

/** Whether a callback names no receiver yet. */
export function isHeldCallback(callback: string): boolean {
  return callback.startsWith(HELD_CALLBACK_PREFIX);
}

/** The SQL LIKE pattern of every held callback. */
export const HELD_CALLBACK_PATTERN = `${HELD_CALLBACK_PREFIX}%`;

/** Why a delivery to a held callback waits. */
export const HELD_REASON = "held until the operator registers where its Organization receives notifications";
