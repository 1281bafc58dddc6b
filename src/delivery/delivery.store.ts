import type { Prisma } from "../db/database";

export interface ClaimedDelivery {
  id: string;
  clientId: string;
  callback: string;
  origin: string;
  payload: string;
  /** Attempts made before this one. */
  attemptCount: number;
  eventReceivedAt: Date;
}

export interface AttemptOutcome {
  deliveryId: string;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The delivery's state after this attempt. */
  status: "DELIVERED" | "PENDING" | "DEAD";
  /** For PENDING: when to try again. */
  nextAttemptAt: Date | null;
}

/**
 * The outbox's SQL. Claims take a lease: a delivery is held by one worker until it records the
 * outcome or the lease runs out (the worker died), so an attempt is never made twice at once, and a
 * crash loses nothing — the delivery becomes claimable again when the lease expires.
 */
export function createDeliveryStore(prisma: Prisma) {
  return {
    /**
     * Up to `limit` due deliveries, at most `perOrigin` for any one origin, none for `excludeOrigins`.
     * FOR UPDATE SKIP LOCKED lets concurrent workers claim disjoint sets without waiting on each other.
     */
    async claimDue({ limit, perOrigin, excludeOrigins, leaseMs }: { limit: number; perOrigin: number; excludeOrigins: string[]; leaseMs: number }): Promise<ClaimedDelivery[]> {
      const rows = await prisma.$queryRawUnsafe<Array<{ id: string; client_id: string; callback: string; origin: string; payload: string; attempt_count: number; received_at: Date }>>(
        `WITH candidates AS (
           SELECT id, origin, next_attempt_at FROM delivery
           WHERE status = 'PENDING' AND next_attempt_at <= now()
             AND (lease_until IS NULL OR lease_until < now())
             AND NOT (origin = ANY($1::text[]))
           ORDER BY next_attempt_at
           LIMIT $2
           FOR UPDATE SKIP LOCKED
         ), ranked AS (
           SELECT id, next_attempt_at, row_number() OVER (PARTITION BY origin ORDER BY next_attempt_at) AS n FROM candidates
         ), chosen AS (
           SELECT id FROM ranked WHERE n <= $3 ORDER BY next_attempt_at LIMIT $5
         )
         UPDATE delivery d SET lease_until = now() + ($4::int * interval '1 millisecond')
         FROM chosen, status_event e
         WHERE d.id = chosen.id AND e.id = d.event_id
         RETURNING d.id, d.client_id, d.callback, d.origin, d.payload, d.attempt_count, e.received_at`,
        excludeOrigins,
        limit * 2,
        perOrigin,
        leaseMs,
        limit,
      );
      return rows.map((r) => ({
        id: r.id,
        clientId: r.client_id,
        callback: r.callback,
        origin: r.origin,
        payload: r.payload,
        attemptCount: r.attempt_count,
        eventReceivedAt: r.received_at,
      }));
    },

    /**
     * Moves the due, unclaimed deliveries of an origin that cannot take more right now a little into
     * the future, so that claims for other origins do not scan past them (up to `limit` rows).
     */
    async deferOrigin(origin: string, byMs: number, limit: number): Promise<number> {
      return prisma.$executeRawUnsafe(
        `UPDATE delivery SET next_attempt_at = now() + ($2::int * interval '1 millisecond')
         WHERE id IN (SELECT id FROM delivery WHERE status = 'PENDING' AND origin = $1 AND next_attempt_at <= now()
                      AND (lease_until IS NULL OR lease_until < now()) ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)`,
        origin,
        byMs,
        limit,
      );
    },

    /** Gives claimed deliveries back unattempted. */
    async release(ids: string[]): Promise<void> {
      if (ids.length === 0) return;
      await prisma.$executeRawUnsafe(`UPDATE delivery SET lease_until = NULL WHERE id = ANY($1::uuid[])`, ids);
    },

    /** Records a batch of attempts and their deliveries' new states in one transaction. */
    async recordOutcomes(outcomes: AttemptOutcome[]): Promise<void> {
      if (outcomes.length === 0) return;
      // Multi-row statements over arrays: Prisma's createMany cost several times more per batch.
      await prisma.$transaction([
        prisma.$executeRawUnsafe(
          `INSERT INTO delivery_attempt (delivery_id, started_at, duration_ms, status_code, error)
           SELECT d::uuid, s::timestamptz, ms, sc, e FROM unnest($1::text[], $2::text[], $3::int[], $4::int[], $5::text[]) AS v(d, s, ms, sc, e)`,
          outcomes.map((o) => o.deliveryId),
          outcomes.map((o) => o.startedAt.toISOString()),
          outcomes.map((o) => o.durationMs),
          outcomes.map((o) => o.statusCode),
          outcomes.map((o) => o.error),
        ),
        prisma.$executeRawUnsafe(
          `UPDATE delivery d SET
             status = v.status::delivery_status,
             attempt_count = d.attempt_count + 1,
             next_attempt_at = COALESCE(v.next_attempt_at, d.next_attempt_at),
             completed_at = CASE WHEN v.status = 'PENDING' THEN NULL ELSE now() END,
             last_error = v.last_error,
             lease_until = NULL
           FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::text[]) AS v(id, status, next_attempt_at, last_error)
           WHERE d.id = v.id`,
          outcomes.map((o) => o.deliveryId),
          outcomes.map((o) => o.status),
          outcomes.map((o) => o.nextAttemptAt?.toISOString() ?? null),
          outcomes.map((o) => (o.status === "DELIVERED" ? null : o.error ?? (o.statusCode === null ? "no answer" : `HTTP ${o.statusCode}`))),
        ),
      ]);
    },

    async queueStats(): Promise<{ pending: number; oldestDueAgeSeconds: number }> {
      const [row] = await prisma.$queryRawUnsafe<Array<{ pending: bigint; oldest: Date | null }>>(
        `SELECT count(*) AS pending, min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()) AS oldest FROM delivery WHERE status = 'PENDING'`,
      );
      return { pending: Number(row?.pending ?? 0), oldestDueAgeSeconds: row?.oldest ? Math.max(0, (Date.now() - row.oldest.getTime()) / 1000) : 0 };
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
