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
 * catching up.
 */
const BATCHES: Record<RetentionKind, string> = {
  delivered_deliveries: `WITH doomed AS (
      SELECT id FROM delivery WHERE status = 'DELIVERED' AND completed_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM delivery d USING doomed WHERE d.id = doomed.id`,
  dead_deliveries: `WITH doomed AS (
      SELECT id FROM delivery WHERE status = 'DEAD' AND completed_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM delivery d USING doomed WHERE d.id = doomed.id`,
  events: `WITH doomed AS (
      SELECT e.id FROM status_event e
      WHERE e.received_at < $1::timestamptz
        AND NOT EXISTS (SELECT 1 FROM delivery d WHERE d.event_id = e.id)
      LIMIT $2::int FOR UPDATE OF e SKIP LOCKED)
    DELETE FROM status_event e USING doomed WHERE e.id = doomed.id`,
  carrier_statuses: `WITH doomed AS (
      SELECT id FROM carrier_status WHERE received_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM carrier_status c USING doomed WHERE c.id = doomed.id`,
  expired_subscriptions: `WITH doomed AS (
      SELECT id FROM subscription WHERE expires_at < $1::timestamptz LIMIT $2::int FOR UPDATE SKIP LOCKED)
    DELETE FROM subscription s USING doomed WHERE s.id = doomed.id`,
};

/**
 * The pending deliveries of subscriptions that have expired, marked dead (their notification is not
 * sent: claims skip them already, delivery.store.ts), so they neither linger nor count as pending.
 */
const EXPIRE_PENDING = `WITH doomed AS (
    SELECT d.id FROM delivery d JOIN subscription s ON s.id = d.subscription_id
    WHERE d.status = 'PENDING' AND s.expires_at <= now() AND (d.lease_until IS NULL OR d.lease_until < now())
    LIMIT $1::int FOR UPDATE OF d SKIP LOCKED)
  UPDATE delivery d SET status = 'DEAD', completed_at = now(), last_error = 'subscription expired before it was sent'
  FROM doomed WHERE d.id = doomed.id`;

export function createRetentionStore(prisma: Prisma) {
  return {
    /** Marks one batch of expired subscriptions' pending deliveries dead; answers how many. */
    expirePendingBatch: (limit: number): Promise<number> => prisma.$executeRawUnsafe(EXPIRE_PENDING, limit),
    /** Deletes one batch of `kind` older than `before`; answers how many rows went. */
    pruneBatch: (kind: RetentionKind, before: Date, limit: number): Promise<number> =>
      prisma.$executeRawUnsafe(BATCHES[kind], before.toISOString(), limit),
  };
}

export type RetentionStore = ReturnType<typeof createRetentionStore>;
