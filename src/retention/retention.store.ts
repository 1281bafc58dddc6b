import type { Prisma } from "../db/database";
import type { RetentionKind } from "../domain/retention";

export type { RetentionKind } from "../domain/retention";

/**
 * One batch of each kind: at most `$2` rows older than `$1`, locked with SKIP LOCKED so that a row
 * a worker holds (or another instance's pruner) is left for later instead of waited for. Each is one
 * statement, so each batch is its own short transaction. A delivery's attempts go with it (ON DELETE
 * CASCADE). An event goes only once it has no delivery left (they go by their own ages first), so
 * retention never takes a pending notification, nor one a client may still retry, with its event.
 * An AWB's stream head (awb_stream) is kept, so its positions never start again from 1 for a client
 * catching up; the statement that deletes events raises each AWB's `awb_stream_pruned` mark to the
 * highest position it deleted, in the same transaction, so a reader that finds a hole finds the
 * mark that explains it (live catch-up steps over such holes).
 */
const BATCHES: Record<RetentionKind, string> = {
  delivered_deliveries: `WITH doomed AS (
      SELECT id FROM delivery WHERE status = 'DELIVERED' AND completed_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM delivery d USING doomed WHERE d.id = doomed.id`,
  dead_deliveries: `WITH doomed AS (
      SELECT id FROM delivery WHERE status = 'DEAD' AND completed_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM delivery d USING doomed WHERE d.id = doomed.id`,
  // Marks are raised in AWB order, so two instances' batches cannot deadlock on them.
  events: `WITH doomed AS (
      SELECT e.id FROM status_event e
      WHERE e.received_at < $1::timestamptz
        AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.event_id = e.id)
      LIMIT $2::int FOR UPDATE OF e SKIP LOCKED),
    gone AS (DELETE FROM status_event e USING doomed WHERE e.id = doomed.id RETURNING e.awb, e.position),
    marked AS (
      INSERT INTO awb_stream_pruned (awb, pruned_through)
      SELECT awb, max(position) FROM gone GROUP BY awb ORDER BY awb
      ON CONFLICT (awb) DO UPDATE SET pruned_through = greatest(awb_stream_pruned.pruned_through, excluded.pruned_through))
    SELECT count(*)::int AS n FROM gone`,
  carrier_statuses: `WITH doomed AS (
      SELECT id FROM carrier_status WHERE received_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM carrier_status c USING doomed WHERE c.id = doomed.id`,
  expired_subscriptions: `WITH doomed AS (
      SELECT id FROM subscription WHERE expires_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM subscription s USING doomed WHERE s.id = doomed.id`,
};

/**
 * The pending and parked deliveries of subscriptions that have expired, or that delivery disabled
 * more than `$2` ago (null: never), and the parked ones whose subscription was deleted (nothing will
 * enable them), marked dead (their notifications are not sent: claims skip them already,
 * delivery.store.ts), so they neither linger nor count as pending; leased ones are left to the next
 * run. Their lease token is cleared: a holder that stalled past its lease is fenced out.
 */
const EXPIRE_PENDING = `WITH doomed AS (
    SELECT d.id, CASE WHEN s.expires_at <= now() THEN 'subscription expired before it was sent'
                      ELSE 'subscription disabled for longer than RETENTION_DEAD_DAYS' END AS reason
    FROM delivery d JOIN subscription s ON s.id = d.subscription_id
    WHERE d.status IN ('PENDING', 'PARKED') AND (s.expires_at <= now() OR s.disabled_at < $2::timestamptz)
      AND (d.lease_until IS NULL OR d.lease_until < now())
    LIMIT $1::int FOR UPDATE OF d SKIP LOCKED
  ), orphaned AS (
    SELECT id, 'subscription deleted while disabled' AS reason FROM delivery
    WHERE status = 'PARKED' AND subscription_id IS NULL
    LIMIT $1::int FOR UPDATE SKIP LOCKED)
  UPDATE delivery d SET status = 'DEAD', completed_at = now(), next_attempt_at = now(), last_error = x.reason,
    lease_until = NULL, lease_token = NULL
  FROM (SELECT * FROM doomed UNION ALL SELECT * FROM orphaned) x WHERE d.id = x.id`;

/** The tables each kind's deletions leave dead rows in (cascades included). */
export const TABLES_OF: Record<RetentionKind, readonly string[]> = {
  delivered_deliveries: ["delivery", "delivery_attempt"],
  dead_deliveries: ["delivery", "delivery_attempt"],
  events: ["status_event", "delivery", "delivery_attempt", "awb_stream_pruned"],
  carrier_statuses: ["carrier_status"],
  expired_subscriptions: ["subscription", "delivery"],
};
const MEASURED = [
  "status_event",
  "carrier_status",
  "delivery",
  "delivery_attempt",
  "subscription",
  "awb_stream",
  "awb_stream_pruned",
];

export function createRetentionStore(prisma: Prisma) {
  return {
    /**
     * VACUUM (ANALYZE) of the tables: their dead rows' space is reused and their row estimates are
     * fresh. For the embedded database, which runs no autovacuum (PGlite is PostgreSQL in single-user
     * mode): without it, deleted rows would keep their space for ever.
     */
    vacuum: (tables: readonly string[]): Promise<number> =>
      prisma.$executeRawUnsafe(`VACUUM (ANALYZE) ${tables.map((t) => `"${t}"`).join(", ")}`),

    /** Each table's size on disk (indexes and TOAST included) and its estimated row count. */
    async tableSizes(): Promise<Array<{ table: string; bytes: number; rows: number }>> {
      const rows = await prisma.$queryRawUnsafe<Array<{ table: string; bytes: bigint | number; rows: number }>>(
        `SELECT c.relname AS table, pg_total_relation_size(c.oid) AS bytes, greatest(c.reltuples, 0)::float8 AS rows
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = current_schema() AND c.relkind = 'r' AND c.relname = ANY($1::text[])`,
        MEASURED,
      );
      return rows.map((r) => ({ table: r.table, bytes: Number(r.bytes), rows: Number(r.rows) }));
    },

    /** Marks one batch of expired (or long disabled) subscriptions' pending deliveries dead; answers how many. */
    expirePendingBatch: (limit: number, disabledBefore: Date | null): Promise<number> =>
      prisma.$executeRawUnsafe(EXPIRE_PENDING, limit, disabledBefore?.toISOString() ?? null),
    /** Deletes one batch of `kind` older than `before`; answers how many rows went. */
    async pruneBatch(kind: RetentionKind, before: Date, limit: number): Promise<number> {
      if (kind !== "events") return prisma.$executeRawUnsafe(BATCHES[kind], before.toISOString(), limit);
      // Its statement ends in a SELECT of the count (the deletion feeds the marks).
      const [row] = await prisma.$queryRawUnsafe<Array<{ n: number }>>(BATCHES.events, before.toISOString(), limit);
      return Number(row?.n ?? 0);
    },
    /** The highest position retention has deleted from `awb`'s stream; 0 when none. */
    prunedThrough: async (awb: string): Promise<number> => {
      const [row] = await prisma.$queryRawUnsafe<Array<{ pruned_through: bigint }>>(
        `SELECT pruned_through FROM awb_stream_pruned WHERE awb = $1`,
        awb,
      );
      return Number(row?.pruned_through ?? 0);
    },
  };
}

export type RetentionStore = ReturnType<typeof createRetentionStore>;
