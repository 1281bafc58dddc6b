import type { Prisma } from "../db/database";
import { groupBy } from "../domain/group-by";

/** A milestone as stored. */
export interface StoredMilestone {
  id: string;
  /** Storage order over all AWBs; not commit order, and nothing orders by it. */
  seq: bigint;
  /** Place in the AWB's stream: 1, 2, 3, … with no gaps, in commit order (see `lockStreams`). */
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

export interface NewMilestone {
  dedupeKey: string;
  /**
   * The key its eventId had before ids were kept per sender (domain/event-id.ts `legacyKeyOf`): an
   * event stored under it with the same AWB and state is this event too.
   */
  legacyKey: string | null;
  awb: string;
  state: string;
  occurredAt: Date;
  toaTimestamp: Date | null;
  station: string | null;
  flight: string | null;
}

type Tx = Pick<Prisma, "$queryRawUnsafe" | "$executeRawUnsafe">;

const COLUMNS = `id::text AS id, seq, position, dedupe_key AS "dedupeKey", awb, state, occurred_at AS "occurredAt", received_at AS "receivedAt",
  toa_timestamp AS "toaTimestamp", station, flight`;

/** Raised inside an ingestion transaction when its positions would leave a gap; the transaction is retried. */
export class PositionConflict extends Error {
  constructor(awb: string) {
    super(
      `a concurrent ingestion stored an event with the same key on another AWB while ${awb}'s positions were assigned`,
    );
  }
}

/**
 * The SQL of milestone ingestion and of the AWB streams. Ordering rests on one rule: an AWB's events
 * are numbered only while its `awb_stream` row is locked, and the lock is held until the transaction
 * ends. So for each AWB, transactions that store events run one after another, a position is taken
 * only after every smaller one has committed, and a rollback returns the numbers it took.
 */
export function createMilestoneStore(prisma: Prisma) {
  return {
    /**
     * Locks the streams of `awbs` (creating missing ones) until the transaction ends and returns their
     * heads. Rows are locked in AWB order, so two ingestions do not deadlock on stream rows (they
     * still can on a dedupe key sent for two AWBs at once; the service retries a deadlock).
     */
    async lockStreams(tx: Tx, awbs: readonly string[]): Promise<Map<string, bigint>> {
      const rows = await tx.$queryRawUnsafe<Array<{ awb: string; last_position: bigint }>>(
        `INSERT INTO awb_stream (awb, last_position) SELECT a, 0 FROM unnest($1::text[]) AS a ORDER BY a
         ON CONFLICT (awb) DO UPDATE SET last_position = awb_stream.last_position
         RETURNING awb, last_position`,
        [...awbs].sort(),
      );
      return new Map(rows.map((r) => [r.awb, BigInt(r.last_position)]));
    },

    /**
     * Inserts the events whose dedupe key is not stored yet, nor their legacy key with the same AWB
     * and state (the first of repeats within the call), numbering each AWB's after its locked head,
     * and moves the heads. Returns what was stored.
     * MUST run after `lockStreams` for every AWB of `events`, in the same transaction.
     */
    async insertNumbered(
      tx: Tx,
      events: readonly NewMilestone[],
      receivedAt: Date,
      heads: ReadonlyMap<string, bigint>,
    ): Promise<StoredMilestone[]> {
      const created = await tx.$queryRawUnsafe<StoredMilestone[]>(
        `WITH v AS (
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $6::text[], $7::text[], $8::text[], $9::text[]) WITH ORDINALITY AS v(k, a, s, o, t, st, f, l, i)
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
           SELECT gen_random_uuid(), k, a, s, o::timestamptz, $5::timestamptz, t::timestamptz, st, f, position FROM numbered ORDER BY i
           ON CONFLICT (dedupe_key) DO NOTHING
           RETURNING ${COLUMNS}
         ), advanced AS (
           UPDATE awb_stream s SET last_position = m.top FROM (SELECT awb, max(position) AS top FROM ins GROUP BY awb) m WHERE s.awb = m.awb
         )
         SELECT * FROM ins`,
        events.map((e) => e.dedupeKey),
        events.map((e) => e.awb),
        events.map((e) => e.state),
        events.map((e) => e.occurredAt.toISOString()),
        receivedAt.toISOString(),
        events.map((e) => e.toaTimestamp?.toISOString() ?? null),
        events.map((e) => e.station),
        events.map((e) => e.flight),
        events.map((e) => e.legacyKey),
      );
      // ON CONFLICT skips a row whose key another transaction (on another AWB, so not serialised
      // with this one by the stream lock) stored after this statement's snapshot. That would leave a
      // hole in this AWB's positions: refuse, so the caller retries with the key then visible.
      for (const [awb, rows] of groupBy(created, (c) => c.awb)) {
        const positions = rows.map((c) => BigInt(c.position));
        positions.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const head = heads.get(awb) ?? 0n;
        if (positions.some((p, i) => p !== head + BigInt(i + 1))) throw new PositionConflict(awb);
      }
      return created.map((c) => ({ ...c, position: BigInt(c.position), seq: BigInt(c.seq) }));
    },

    /**
     * The stored event each of `events` repeats (by its dedupe key, or its legacy key with the same
     * AWB and state), by dedupe key; an event whose original is not stored (any more) is left out.
     */
    async originalsOf(tx: Tx, events: readonly NewMilestone[]): Promise<Map<string, string>> {
      if (events.length === 0) return new Map();
      const rows = await tx.$queryRawUnsafe<Array<{ k: string; id: string }>>(
        `SELECT v.k, coalesce(e.id, l.id)::text AS id
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(k, l, a, s)
         LEFT JOIN status_event e ON e.dedupe_key = v.k
         LEFT JOIN status_event l ON l.dedupe_key = v.l AND l.awb = v.a AND l.state = v.s
         WHERE e.id IS NOT NULL OR l.id IS NOT NULL`,
        events.map((e) => e.dedupeKey),
        events.map((e) => e.legacyKey),
        events.map((e) => e.awb),
        events.map((e) => e.state),
      );
      return new Map(rows.map((r) => [r.k, r.id]));
    },

    /** The stored events of one AWB after `position`, in stream order, at most `limit`. */
    async after(awb: string, position: bigint, limit: number): Promise<StoredMilestone[]> {
      const rows = await prisma.$queryRawUnsafe<StoredMilestone[]>(
        `SELECT ${COLUMNS} FROM status_event WHERE awb = $1 AND position > $2 ORDER BY position LIMIT $3`,
        awb,
        position,
        limit,
      );
      return rows.map((r) => ({ ...r, position: BigInt(r.position), seq: BigInt(r.seq) }));
    },

    /** The last position of each AWB's stream (0 for an AWB with no events). */
    async heads(awbs: readonly string[]): Promise<Map<string, bigint>> {
      const rows = await prisma.$queryRawUnsafe<Array<{ awb: string; last_position: bigint }>>(
        `SELECT awb, last_position FROM awb_stream WHERE awb = ANY($1::text[])`,
        [...awbs],
      );
      const heads = new Map<string, bigint>(awbs.map((a) => [a, 0n]));
      for (const r of rows) heads.set(r.awb, BigInt(r.last_position));
      return heads;
    },
  };
}

export type MilestoneStore = ReturnType<typeof createMilestoneStore>;
