import { clientEventIdOf } from "../domain/event-id";
import type { StoredMilestone } from "./milestone.service";

/** A stored milestone as REST and live events show it. `timestamp` is when it happened. */
export function milestoneView(e: StoredMilestone) {
  return {
    eventId: e.id,
    clientEventId: clientEventIdOf(e.dedupeKey),
    sequence: e.position.toString(),
    awb: e.awb,
    state: e.state,
    timestamp: e.occurredAt.toISOString(),
    toaTimestamp: e.toaTimestamp?.toISOString() ?? null,
    receivedAt: e.receivedAt.toISOString(),
    station: e.station,
    flight: e.flight,
  };
}
