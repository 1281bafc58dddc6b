import { sql } from "../../db/sql-statement";

/** A milestone as stored. */
export interface StoredMilestone {
  id: string;
  /** Storage order over all AWBs; not commit order, and nothing orders by it. */
  seq: bigint;
  /** Place in the AWB's stream: 1, 2, 3, … with no gaps, in commit order (milestone.store.ts). */
  position: bigint;
  /** What makes a repeat of it a duplicate (domain/event-id.ts `dedupeKeyOf`). */
  dedupeKey: string;
  awb: string;
  state: string;
  occurredAt: Date;
  receivedAt: Date;
  toaTimestamp: Date | null;
  station: string | null;
  flight: string | null;
}

/** The columns of a `StoredMilestone`. */
export const COLUMNS = sql`id::text AS id, seq, position, dedupe_key AS "dedupeKey", awb, state, occurred_at AS "occurredAt",
  received_at AS "receivedAt", toa_timestamp AS "toaTimestamp", station, flight`;
