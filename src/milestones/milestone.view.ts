import { clientEventIdOf } from "../domain/event-id";
import type { StoredMilestone } from "./milestone.service";

/** A stored milestone as REST and live events show it: plain JSON (it crosses Redis unchanged). */
export interface MilestoneView {
  eventId: string;
  /** The eventId the ingesting caller gave, or null (absent from an older instance's publishes). */
  clientEventId: string | null;
  /** Decimal string of the event's place in its AWB's stream. */
  sequence: string;
  awb: string;
  state: string;
  /** When it happened. */
  timestamp: string;
  toaTimestamp: string | null;
  receivedAt: string;
  station: string | null;
  flight: string | null;
}

export function milestoneView(e: StoredMilestone): MilestoneView {
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
