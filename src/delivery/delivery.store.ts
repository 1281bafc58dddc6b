import { randomUUID } from "node:crypto";
import type { Prisma, SqlExecutor } from "../db/database";

/** PostgreSQL NOTIFY channel: ingestion notifies it when it queues deliveries (delivered at commit). */
export const DELIVERY_CHANNEL = "cgw_deliveries";

export interface ClaimedDelivery {
  id: string;
  /** The claim holding this delivery's lease; every write about this attempt names it. */
  leaseToken: string;
  clientId: string;
  callback: string;
  origin: string;
  payload: string;
  /** Attempts made before this one. */
  attemptCount: number;
  eventReceivedAt: Date;
  /** The W3C traceparent of the ingestion that queued it, when tracing was on there: the send continues that trace. */
  traceParent?: string | null;
}

export interface AttemptOutcome {
  deliveryId: string;
  leaseToken: string;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** The delivery's state after this attempt. */
  status: "DELIVERED" | "PENDING" | "DEAD";
  /** For PENDING: when to try again. */
  nextAttemptAt: Date | null;
}

/** A delivery being queued by an ingestion. */
export interface NewDelivery {
  id: string;
  eventId: string;
  subscriptionId: string;
  clientId: string;
  callback: string;
  origin: string;
  payload: string;
  /** Queued already claimed by this process's worker (see DeliveryHandoff). */
  leased: boolean;
}

type Tx = Pick<Prisma, "$queryRawUnsafe">;

/**
 * SQL: whether the subscription `ref` names is disabled, read under a key-share lock on its row.
 * Every statement that parks a delivery decides with it, and enabling a subscription first locks its
 * row FOR UPDATE (subscription.store.ts), which that lock conflicts with: a parking statement either
 * waits for an enable under way and then reads the subscription enabled (and parks nothing), or holds
 * the enable back until it has committed, so that the enable's next statement sees what it parked.
 * No delivery is left parked under an enabled subscription. (Key-share does not conflict with the
 * no-key updates of delivery's failing clock.)
 */
export const subscriptionDisabled = (ref: string) =>
  `EXISTS (SELECT 1 FROM subscription s WHERE s.id = ${ref} AND s.disabled_at IS NOT NULL FOR KEY SHARE OF s)`;

/**
 * Rows per insert. The rows travel as eight array parameters (beside four scalars) whatever their
 * number, so this bounds the size of one statement's arrays (memory on both sides), not a
 * bind-parameter count.
 */
const INSERT_CHUNK = 2_000;

/**
 * The outbox's SQL, all of it: the delivery worker's hot path (claim, record, release, defer) as raw
 * multi-row statements.
 *
 * A claim takes a lease and names it with a fresh token. Until the lease runs out no other claim can
 * take the delivery; after that (its worker died or stalled) another claim may, with a new token.
 * Every write after a claim matches the token (graphile-worker's `locked_by`), so a holder whose
 * lease was taken over writes nothing: it cannot overwrite the new holder's outcome, count an attempt
 * twice or clear the new lease. Every statement that hands a delivery back without a new claim (a
 * give-back, a recorded outcome, parking; a redelivery, delivery.service.ts; retention's expiry pass)
 * clears the token, so no holder's token can match again afterwards. A crash loses nothing: the
 * delivery is claimable when its lease ends.
 */
/**
 * Queues deliveries inside an ingestion's transaction. Rows marked `leased` are written already
 * claimed, under `leaseToken`, for this process's worker to send after the commit without a claim
 * query; if the process dies first, their lease runs out and any worker claims them. Workers of
 * other processes LISTENing on DELIVERY_CHANNEL are told at commit when unleased rows were queued.
 * `traceParent`: the ingestion's trace, stored with every row (null with tracing off).
 */
export async function queueDeliveries(
  tx: Tx,
  deliveries: readonly NewDelivery[],
  lease: { token: string; ms: number },
  traceParent: string | null = null,
): Promise<void> {
  for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) {
    const chunk = deliveries.slice(i, i + INSERT_CHUNK);
    const notify = chunk.some((d) => !d.leased);
    await tx.$queryRawUnsafe(
      `WITH ins AS (
           INSERT INTO delivery (id, event_id, subscription_id, client_id, callback, origin, payload, lease_until, lease_token, trace_parent)
           SELECT i::uuid, e::uuid, s::uuid, c::uuid, cb, o, p,
                  CASE WHEN l THEN now() + ($8::int * interval '1 millisecond') END, CASE WHEN l THEN $9::uuid END, $12::text
           FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $10::boolean[]) AS v(i, e, s, c, cb, o, p, l)
           RETURNING 1
         ), notified AS (SELECT pg_notify('${DELIVERY_CHANNEL}', '') FROM (SELECT count(*) FROM ins) n WHERE $11::boolean)
         SELECT (SELECT count(*) FROM notified)::int AS notified`,
      chunk.map((d) => d.id),
      chunk.map((d) => d.eventId),
      chunk.map((d) => d.subscriptionId),
      chunk.map((d) => d.clientId),
      chunk.map((d) => d.callback),
      chunk.map((d) => d.origin),
      chunk.map((d) => d.payload),
      lease.ms,
      lease.token,
      chunk.map((d) => d.leased),
      notify,
      traceParent,
    );
  }
}

/** A subscription that delivery has just disabled (every attempt failed for DELIVERY_DISABLE_AFTER_HOURS). */
export interface DisabledSubscription {
  id: string;
  clientId: string;
  callback: string;
  reason: string;
}

export function createDeliveryStore(sql: SqlExecutor) {
  /**
   * Parks every pending delivery of these subscriptions that no live lease holds, while they are
   * disabled; a lease that ran out is cleared with it (its stale holder is fenced out). A delivery
   * under a live lease is left to its holder: if it records a retry, a claim parks it when due.
   */
  async function parkPending(subscriptionIds: readonly string[]): Promise<number> {
    const rows = await sql.query<{ n: number }>(
      `WITH parked AS (
         UPDATE delivery d SET status = 'PARKED', lease_until = NULL, lease_token = NULL
         WHERE d.subscription_id = ANY($1::uuid[]) AND d.status = 'PENDING'
           AND (d.lease_until IS NULL OR d.lease_until < now()) AND ${subscriptionDisabled("d.subscription_id")}
         RETURNING 1
       ) SELECT count(*)::int AS n FROM parked`,
      [subscriptionIds],
    );
    return rows[0]?.n ?? 0;
  }

  return {
    /**
     * Up to `limit` due deliveries, at most `perOrigin` for any one origin, none for `excludeOrigins`,
     * none of an expired or disabled subscription. A due delivery of a disabled subscription (queued
     * by an ingestion that raced the disable, or retried by a send under way when it came) is parked
     * here, so no later claim scans it again.
     * FOR UPDATE SKIP LOCKED lets concurrent workers claim disjoint sets without waiting on each other.
     */
    async claimDue({
      limit,
      perOrigin,
      excludeOrigins,
      leaseMs,
    }: {
      limit: number;
      perOrigin: number;
      excludeOrigins: string[];
      leaseMs: number;
    }): Promise<ClaimedDelivery[]> {
      const leaseToken = randomUUID();
      const rows = await sql.query<{
        id: string;
        client_id: string;
        callback: string;
        origin: string;
        payload: string;
        attempt_count: number;
        received_at: Date;
        trace_parent: string | null;
      }>(
        `WITH candidates AS (
           SELECT d.id, d.origin, d.next_attempt_at, s.disabled_at IS NOT NULL AS disabled
           FROM delivery d LEFT JOIN subscription s ON s.id = d.subscription_id
           WHERE d.status = 'PENDING' AND d.next_attempt_at <= now()
             AND (d.lease_until IS NULL OR d.lease_until < now())
             AND NOT (d.origin = ANY($1::text[]))
             -- Nothing is sent for an expired subscription (retention marks these dead).
             AND NOT coalesce(s.expires_at <= now(), false)
           ORDER BY d.next_attempt_at
           LIMIT $2
           FOR UPDATE OF d SKIP LOCKED
         ), parked AS (
           -- Sent once its owner enables the subscription again; a stale holder's token goes with it.
           -- Decided again under the lock: one whose enable committed meanwhile stays due.
           UPDATE delivery d SET status = 'PARKED', lease_until = NULL, lease_token = NULL
           FROM candidates c WHERE d.id = c.id AND c.disabled AND ${subscriptionDisabled("d.subscription_id")}
           RETURNING 1
         ), ranked AS (
           SELECT id, next_attempt_at, row_number() OVER (PARTITION BY origin ORDER BY next_attempt_at) AS n
           FROM candidates WHERE NOT disabled
         ), chosen AS (
           SELECT id FROM ranked WHERE n <= $3 ORDER BY next_attempt_at LIMIT $5
         )
         UPDATE delivery d SET lease_until = now() + ($4::int * interval '1 millisecond'), lease_token = $6::uuid
         FROM chosen, status_event e
         WHERE d.id = chosen.id AND e.id = d.event_id
         RETURNING d.id, d.client_id, d.callback, d.origin, d.payload, d.attempt_count, e.received_at, d.trace_parent`,
        [excludeOrigins, limit * 2, perOrigin, leaseMs, limit, leaseToken],
      );
      return rows.map((r) => ({
        id: r.id,
        leaseToken,
        clientId: r.client_id,
        callback: r.callback,
        origin: r.origin,
        payload: r.payload,
        attemptCount: r.attempt_count,
        eventReceivedAt: new Date(r.received_at),
        traceParent: r.trace_parent,
      }));
    },

    /**
     * Moves the due, unclaimed deliveries of an origin that cannot take more right now a little into
     * the future, so that claims for other origins do not scan past them (up to `limit` rows).
     */
    async deferOrigin(origin: string, byMs: number, limit: number): Promise<number> {
      const rows = await sql.query<{ n: number }>(
        `WITH moved AS (
           UPDATE delivery SET next_attempt_at = now() + ($2::int * interval '1 millisecond')
           WHERE id IN (SELECT id FROM delivery WHERE status = 'PENDING' AND origin = $1 AND next_attempt_at <= now()
                        AND (lease_until IS NULL OR lease_until < now()) ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
           RETURNING 1
         ) SELECT count(*)::int AS n FROM moved`,
        [origin, byMs, limit],
      );
      return rows[0]?.n ?? 0;
    },

    /** Gives claimed deliveries back unattempted; a delivery whose lease another claim holds now is left alone. */
    async release(claims: Array<{ id: string; leaseToken: string }>): Promise<number> {
      if (claims.length === 0) return 0;
      const rows = await sql.query<{ n: number }>(
        `WITH released AS (
           UPDATE delivery d SET lease_until = NULL, lease_token = NULL
           FROM unnest($1::uuid[], $2::uuid[]) AS v(id, token) WHERE d.id = v.id AND d.lease_token = v.token
           RETURNING 1
         ) SELECT count(*)::int AS n FROM released`,
        [claims.map((c) => c.id), claims.map((c) => c.leaseToken)],
      );
      return rows[0]?.n ?? 0;
    },

    /**
     * Records attempts and their deliveries' new states in one statement. An outcome whose claim no
     * longer holds the delivery is dropped whole (attempt row included); returns how many were recorded.
     */
    async recordOutcomes(
      outcomes: AttemptOutcome[],
      failing: {
        /** A subscription every attempt of which has failed this long is disabled (0: never). */
        disableAfterHours: number;
        onDisabled: (subscriptions: DisabledSubscription[]) => void;
        /**
         * Parking the disabled subscriptions' deliveries failed (the outcomes are recorded). Without
         * it, the error is thrown.
         */
        onParkingFailed?: (error: unknown) => void;
      } = { disableAfterHours: 0, onDisabled: () => {} },
    ): Promise<number> {
      if (outcomes.length === 0) return 0;
      // One multi-row statement over arrays: Prisma's createMany cost several times more per batch.
      const rows = await sql.query<{ n: number; disabled: DisabledSubscription[] }>(
        `WITH v AS (
           SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[], $7::int[], $8::int[], $9::text[])
             AS v(id, token, status, next_attempt_at, last_error, started_at, duration_ms, status_code, error)
         ), updated AS (
           UPDATE delivery d SET
             status = v.status::delivery_status,
             attempt_count = d.attempt_count + 1,
             next_attempt_at = COALESCE(v.next_attempt_at, d.next_attempt_at),
             completed_at = CASE WHEN v.status = 'PENDING' THEN NULL ELSE now() END,
             last_error = v.last_error,
             lease_until = NULL,
             lease_token = NULL
           FROM v WHERE d.id = v.id AND d.lease_token = v.token
           RETURNING d.id, d.subscription_id, v.status AS outcome, v.started_at
         ), attempts AS (
           INSERT INTO delivery_attempt (delivery_id, started_at, duration_ms, status_code, error)
           SELECT v.id, v.started_at, v.duration_ms, v.status_code, v.error FROM v JOIN updated USING (id)
           RETURNING 1
         ), per_subscription AS (
           SELECT subscription_id AS id, bool_or(outcome = 'DELIVERED') AS ok, min(started_at) AS first_failure
           FROM updated WHERE subscription_id IS NOT NULL GROUP BY subscription_id
         ), failing AS (
           -- A success clears the failing clock; a failure starts it, and disables the subscription once
           -- it is older than $10 hours. Only changes are written: a failure while the clock runs is not.
           UPDATE subscription s SET
             failing_since = CASE WHEN x.ok THEN NULL ELSE coalesce(s.failing_since, x.first_failure) END,
             disabled_at = CASE WHEN NOT x.ok AND $10::int > 0 AND s.disabled_at IS NULL
                                     AND s.failing_since < now() - $10::int * interval '1 hour'
                                THEN now() ELSE s.disabled_at END,
             disabled_reason = CASE WHEN NOT x.ok AND $10::int > 0 AND s.disabled_at IS NULL
                                         AND s.failing_since < now() - $10::int * interval '1 hour'
                                    THEN 'every delivery attempt failed since ' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')
                                    ELSE s.disabled_reason END
           FROM per_subscription x
           WHERE s.id = x.id AND (
             (x.ok AND s.failing_since IS NOT NULL)
             OR (NOT x.ok AND s.failing_since IS NULL)
             OR (NOT x.ok AND $10::int > 0 AND s.disabled_at IS NULL AND s.failing_since < now() - $10::int * interval '1 hour'))
           RETURNING s.id::text AS id, s.client_id::text AS client_id, s.callback, s.disabled_reason,
                     -- disabled_at holds milliseconds: now() itself, rounded, when set by this statement
                     s.disabled_at IS NOT NULL AND abs(extract(epoch FROM s.disabled_at - now())) < 0.001 AS newly_disabled
         )
         SELECT (SELECT count(*)::int FROM attempts) AS n,
                (SELECT coalesce(json_agg(json_build_object('id', id, 'clientId', client_id, 'callback', callback,
                   'reason', disabled_reason)), '[]'::json)
                 FROM failing WHERE newly_disabled) AS disabled`,
        [
          outcomes.map((o) => o.deliveryId),
          outcomes.map((o) => o.leaseToken),
          outcomes.map((o) => o.status),
          outcomes.map((o) => o.nextAttemptAt?.toISOString() ?? null),
          outcomes.map((o) =>
            o.status === "DELIVERED"
              ? null
              : (o.error ?? (o.statusCode === null ? "no answer" : `HTTP ${o.statusCode}`)),
          ),
          outcomes.map((o) => o.startedAt.toISOString()),
          outcomes.map((o) => o.durationMs),
          outcomes.map((o) => o.statusCode),
          outcomes.map((o) => o.error),
          failing.disableAfterHours,
        ],
      );
      const disabled = rows[0]?.disabled ?? [];
      if (disabled.length > 0) {
        failing.onDisabled(disabled);
        // A statement writes a row once, so the retries it just recorded are parked by a second one.
        // Should it fail, claims park these deliveries as they come due.
        try {
          await parkPending(disabled.map((d) => d.id));
        } catch (error) {
          if (!failing.onParkingFailed) throw error;
          failing.onParkingFailed(error);
        }
      }
      return rows[0]?.n ?? 0;
    },

    async queueStats(): Promise<{ pending: number; oldestDueAgeSeconds: number }> {
      const [row] = await sql.query<{ pending: number; oldest: Date | null }>(
        `SELECT count(*)::int AS pending, min(next_attempt_at) FILTER (WHERE next_attempt_at <= now()) AS oldest FROM delivery WHERE status = 'PENDING'`,
        [],
      );
      return {
        pending: row?.pending ?? 0,
        oldestDueAgeSeconds: row?.oldest ? Math.max(0, (Date.now() - new Date(row.oldest).getTime()) / 1000) : 0,
      };
    },
  };
}

export type DeliveryStore = ReturnType<typeof createDeliveryStore>;
