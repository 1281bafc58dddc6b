/**
 * An event's dedupe key: what makes ingestion idempotent (docs/INGESTION.md "Idempotency"). The key
 * spaces below are disjoint by their tags, so no sender can make a key of another space:
 *
 * | key | for |
 * |---|---|
 * | `client:<client id>:<eventId>` | an eventId a client sent (REST, GraphQL): its own, no other client's |
 * | `broker:<eventId>` | an eventId in a JSON message of the broker queue (one sender: the operator's queue) |
 * | `id:fsu:…`, `id:xfsu:…` | an id derived from a carrier message's content: one status is one event, whoever relays it |
 * | `id:<eventId>` | an eventId stored before ids were kept per sender (whose it was is not known): see `legacyKeyOf` |
 * | `msg:<message>:<n>` | the n-th event of a broker message that gave it neither eventId nor timestamp |
 * | `awb:<awb>\|<state>\|<instant>` | an event without id: the milestone itself, whoever sends it |
 */

/** Who sent events, and so whose space a caller's eventId is in: a client, or the broker queue. */
export type EventSender = { readonly clientId: string } | "broker";

/**
 * Prefixes of the ids the gateway derives from carrier messages (ingestion/carrier-message.ts,
 * `carrierEventId`). A caller's eventId may not start with one (in any case): such an id is the
 * gateway's, shared by every sender, and must mean the content it was derived from.
 */
export const DERIVED_EVENT_ID_PREFIXES = ["fsu:", "xfsu:"] as const;

/** The derived-id prefix `eventId` starts with (case ignored), if any. */
export function derivedPrefixOf(eventId: string): string | undefined {
  const lower = eventId.slice(0, 5).toLowerCase();
  return DERIVED_EVENT_ID_PREFIXES.find((prefix) => lower.startsWith(prefix));
}

/** What the key is made of. */
export interface KeyedEvent {
  /** The caller's eventId, or an id a carrier message's reader derived (`DERIVED_EVENT_ID_PREFIXES`). */
  readonly eventId: string | null;
  /** A broker message's identity and the event's place in it, for an event with neither eventId nor timestamp. */
  readonly messageKey?: string | undefined;
  readonly awb: string;
  readonly state: string;
  readonly occurredAt: Date;
}

/**
 * The dedupe key of an event from `sender`. An eventId with a derived prefix is taken as derived:
 * callers cannot send one (milestone.validate.ts refuses it), only the carrier readers make them.
 */
export function dedupeKeyOf(event: KeyedEvent, sender: EventSender): string {
  const { eventId } = event;
  if (eventId !== null) {
    if (derivedPrefixOf(eventId) !== undefined) return `id:${eventId}`;
    return sender === "broker" ? `broker:${eventId}` : `client:${sender.clientId}:${eventId}`;
  }
  if (event.messageKey !== undefined) return `msg:${event.messageKey}`;
  return `awb:${event.awb}|${event.state}|${event.occurredAt.toISOString()}`;
}

/**
 * The key a caller's eventId had before ids were kept per sender ("id:" + eventId), or null for an
 * event that has no caller's id. Such a stored key's sender is not known, so it stands for the
 * re-send of that event by anyone — the same AWB and status (the store checks both), so that an id
 * two senders happen to share names one event only if it is the same milestone.
 */
export function legacyKeyOf(event: KeyedEvent): string | null {
  return event.eventId !== null && derivedPrefixOf(event.eventId) === undefined ? `id:${event.eventId}` : null;
}

/** The eventId the sender gave (or the carrier reader derived), read back from a dedupe key; null when none. */
export function clientEventIdOf(dedupeKey: string): string | null {
  if (dedupeKey.startsWith("id:")) return dedupeKey.slice(3);
  if (dedupeKey.startsWith("broker:")) return dedupeKey.slice(7);
  if (dedupeKey.startsWith("client:")) {
    const end = dedupeKey.indexOf(":", 7);
    return end < 0 ? null : dedupeKey.slice(end + 1);
  }
  return null;
}
