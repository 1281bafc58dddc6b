/** One AWB's milestones as the dashboard knows them: history and live events merged, no repeats. */
export interface Milestone {
  eventId: string;
  sequence: string;
  awb: string;
  state: string;
  timestamp: string;
  receivedAt: string;
  toaTimestamp: string | null;
  station: string | null;
  flight: string | null;
}

export const MILESTONE_FIELDS = "eventId sequence awb state timestamp receivedAt toaTimestamp station flight";

export class Timeline {
  private readonly byEvent = new Map<string, Milestone>();
  private last = -1n;

  constructor(readonly awb: string) {}

  /** Adds what is new; a replay after a reconnect repeats events, which are dropped here. */
  add(milestones: readonly Milestone[]): boolean {
    let changed = false;
    for (const milestone of milestones) {
      if (this.byEvent.has(milestone.eventId)) continue;
      this.byEvent.set(milestone.eventId, milestone);
      const sequence = BigInt(milestone.sequence);
      if (sequence > this.last) this.last = sequence;
      changed = true;
    }
    return changed;
  }

  /** Newest first by when it happened; equal times by the order stored. */
  newestFirst(): Milestone[] {
    return [...this.byEvent.values()].sort(
      (a, b) => b.timestamp.localeCompare(a.timestamp) || Number(BigInt(b.sequence) - BigInt(a.sequence)),
    );
  }

  /** The highest sequence seen, for `after` (catch-up); "0" before anything is known. */
  lastSequence(): string {
    return this.last < 0n ? "0" : this.last.toString();
  }

  get size(): number {
    return this.byEvent.size;
  }
}

const WATCHED_KEY = "cgw.watchedAwbs";

export function loadWatched(): string[] {
  try {
    const value: unknown = JSON.parse(localStorage.getItem(WATCHED_KEY) ?? "[]");
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}

export function saveWatched(awbs: readonly string[]): void {
  try {
    localStorage.setItem(WATCHED_KEY, JSON.stringify(awbs));
  } catch {
    /* storage disabled: the list lives for this page only */
  }
}
