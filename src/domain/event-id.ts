/**
 * An event's dedupe key is "id:" + the caller's eventId, or, when the caller gave none, the
 * milestone's identity ("awb:…|state|timestamp"): the caller's id is read back from it.
 */
export function clientEventIdOf(dedupeKey: string): string | null {
  return dedupeKey.startsWith("id:") ? dedupeKey.slice(3) : null;
}
