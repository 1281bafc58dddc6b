import { param, sql, statement } from "../../db/sql-statement";
import { COLUMNS, type StoredMilestone } from "./milestone-columns";

/**
 * Inserts the events (one element of the arrays each) whose dedupe key is not stored yet, nor their
 * legacy key with the same AWB and state, the first of repeats within the call; numbers each AWB's
 * after its stream's head and moves the head. Answers what was stored. Runs after lock-streams for
 * every AWB, in the same transaction: the heads it reads are locked.
 */
export const insertNumbered = statement<
  {
    dedupeKeys: string[];
    awbs: string[];
    states: string[];
    occurredAt: string[];
    receivedAt: string;
    toaTimestamps: Array<string | null>;
    stations: Array<string | null>;
    flights: Array<string | null>;
    legacyKeys: Array<string | null>;
  },
  StoredMilestone
>(
  "milestones/insert-numbered",
  sql`WITH v AS (
        SELECT * FROM unnest(${param("dedupeKeys")}::text[], ${param("awbs")}::text[], ${param("states")}::text[],
                             ${param("occurredAt")}::text[], ${param("toaTimestamps")}::text[], ${param("stations")}::text[],
                             ${param("flights")}::text[], ${param("legacyKeys")}::text[])
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
