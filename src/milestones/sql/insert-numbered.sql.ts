import { type JsonColumn, jsonRows, param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type StoredMilestone } from "./milestone-columns";

/**
 * Inserts the events (one element of the arrays each) whose dedupe key is not stored yet, nor their
 * legacy key with the same AWB and state, the first of repeats within the call; numbers each AWB's
 * after its stream's head and moves the head. Answers what was stored. Runs after lock-streams for
 * every AWB, in the same transaction: the heads it reads are locked.
 */
export const insertNumbered = statement<
  {
    /** One value per event, in the events' order (jsonColumn). */
    dedupeKeys: JsonColumn;
    awbs: JsonColumn;
    states: JsonColumn;
    occurredAt: JsonColumn;
    receivedAt: string;
    toaTimestamps: JsonColumn;
    stations: JsonColumn;
    flights: JsonColumn;
    legacyKeys: JsonColumn;
  },
  StoredMilestone
>(
  "milestones/insert-numbered",
  sql`WITH v AS (
        SELECT * FROM ${jsonRows("dedupeKeys", "awbs", "states", "occurredAt", "toaTimestamps", "stations", "flights", "legacyKeys")}
          WITH ORDINALITY AS v(k, a, s, o, t, st, f, l, i)
      ), fresh AS (
        SELECT DISTINCT ON (k) * FROM v
        WHERE NOT EXISTS (SELECT 1 FROM status_event e WHERE e.dedupe_key = v.k)
          AND NOT EXISTS (SELECT 1 FROM status_event e WHERE e.dedupe_key = v.l AND e.awb = v.a AND e.state = v.s)
        ORDER BY k, i
      ), numbered AS (
        SELECT fresh.*, h.last_position + row_number() OVER (PARTITION BY fresh.a ORDER BY fresh.i) AS position
        FROM fresh JOIN awb_stream h ON h.awb = fresh.a
      ), ins AS (
        INSERT INTO status_event (id, dedupe_key, awb, state, occurred_at, received_at, toa_timestamp, station, flight, position)
        SELECT gen_random_uuid(), k, a, s, o::timestamptz, ${param("receivedAt")}::timestamptz, t::timestamptz, st, f, position
        FROM numbered ORDER BY i
        ON CONFLICT (dedupe_key) DO NOTHING
        RETURNING ${COLUMNS}
      ), advanced AS (
        UPDATE awb_stream s SET last_position = m.top
        FROM (SELECT awb, max(position) AS top FROM ins GROUP BY awb) m WHERE s.awb = m.awb
      )
      SELECT * FROM ins`,
);
