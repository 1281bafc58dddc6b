import { randomUUID } from "node:crypto";
import { sqlStateOf } from "../db/availability";
import type { SqlExecutor } from "../db/database";
import { sqlInteger, sqlString, sqlStringArray, sqlUuid } from "../db/sql-literal";

/** A subscription row as the service reads it. */
export interface SubscriptionRow {
  id: string;
  awb: string;
  callback: string;
  states: string[];
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
}

/** What the service writes: the canonical AWB, the normalised callback, the canonical codes. */
export interface SubscriptionFields {
  awb: string;
  callback: string;
  states: readonly string[];
  /** Null: it never expires. */
  expiresAt: Date | null;
}

/** What a capped insert did: stored the row, found the client at its cap, or met the same (AWB, callback). */
export type CappedInsert =
  { kind: "created"; row: SubscriptionRow } | { kind: "limit"; count: number } | { kind: "duplicate" };

/** What an update did. `callbackDiffers` wrote nothing: the new callback needs its check first. */
export type Update =
  | { kind: "updated"; row: SubscriptionRow }
  | { kind: "missing" }
  | { kind: "duplicate"; existing: string }
  | { kind: "callbackDiffers"; current: string };

const COLUMNS = `id::text AS id, awb, callback, states, created_at AS "createdAt", updated_at AS "updatedAt",
  expires_at AS "expiresAt", disabled_at AS "disabledAt", disabled_reason AS "disabledReason"`;
/** A subscription that still counts: not expired (an expired one is deleted by retention later). */
const LIVE = "(expires_at IS NULL OR expires_at > now())";
const UNIQUE_VIOLATION = "23505";

/**
 * Two statements removing the client's expired subscription of (awb, callback), if any, so that a new
 * or updated one can take the pair. Its notifications still queued are not sent (as retention would
 * mark them), nor handed to the new one: a delivery whose subscription is gone would be sent. A send
 * under way is fenced out (its lease token cleared): its outcome is not recorded over the dead state.
 */
function expiredPurgeScript(client: string, awb: string, callback: string): string {
  const same = `client_id = ${client} AND awb = ${sqlString(awb)} AND callback = ${sqlString(callback)}`;
  return `UPDATE delivery SET status = 'DEAD', completed_at = now(), last_error = 'subscription expired before it was sent',
    lease_until = NULL, lease_token = NULL
  WHERE status IN ('PENDING', 'PARKED') AND subscription_id IN (SELECT id FROM subscription WHERE ${same} AND NOT ${LIVE});
DELETE FROM subscription WHERE ${same} AND NOT ${LIVE} RETURNING id`;
}

/**
 * The client's cap (CONTRACT §2: past it, create answers 409) as one script: lock the client's row,
 * remove an expired subscription of the same AWB and callback (expiredPurgeScript), then count and
 * insert. Not one statement: a statement reads what had committed
 * when it started, so a lock taken inside the statement that counts would wait for a concurrent
 * create and then count without that create's row (both would be admitted at cap − 1). As a script,
 * the second statement starts once the lock is held, and the lock lasts until the script's implicit
 * transaction ends, so concurrent creates of one client count-and-insert one after the other. FOR NO
 * KEY UPDATE does not block the key-share locks that inserts referencing the client take.
 */
export function insertWithinCapScript(
  clientId: string,
  id: string,
  subscription: SubscriptionFields,
  cap: number,
): string {
  const client = sqlUuid(clientId);
  const expiresAt =
    subscription.expiresAt === null ? "NULL" : `${sqlString(subscription.expiresAt.toISOString())}::timestamptz`;
  // An expired subscription of the same AWB and callback no longer counts: the new one takes its place.
  return `SELECT 1 FROM client WHERE id = ${client} FOR NO KEY UPDATE;
${expiredPurgeScript(client, subscription.awb, subscription.callback)};
WITH counted AS (SELECT count(*)::int AS n FROM subscription WHERE client_id = ${client} AND ${LIVE}),
     stamp AS (SELECT clock_timestamp() AS at),
     inserted AS (
       INSERT INTO subscription (id, client_id, awb, callback, states, created_at, updated_at, expires_at)
       SELECT ${sqlUuid(id)}, ${client}, ${sqlString(subscription.awb)}, ${sqlString(subscription.callback)},
              ${sqlStringArray(subscription.states)}, stamp.at, stamp.at, ${expiresAt}
       FROM counted, stamp WHERE counted.n < ${sqlInteger(cap)}
       ON CONFLICT (client_id, awb, callback) DO NOTHING
       RETURNING ${COLUMNS}
     )
SELECT counted.n AS count, inserted.* FROM counted LEFT JOIN inserted ON true`;
}

/**
 * The SQL of subscriptions, on the raw driver: these are one-row statements, whose cost through
 * Prisma was mostly Prisma's own per call (BENCHMARKS.md). Each method is one round trip; the service
 * makes one per operation, two for a create or a callback-changing update (the callback's check
 * between them). Every statement names the client, so another client's subscription is as absent as
 * a missing one.
 */
export function createSubscriptionStore(sql: SqlExecutor) {
  async function existing(clientId: string, awb: string, callback: string): Promise<string | null> {
    const [row] = await sql.query<{ id: string }>(
      `SELECT id::text AS id FROM subscription WHERE client_id = $1::uuid AND awb = $2 AND callback = $3 AND ${LIVE}`,
      [clientId, awb, callback],
    );
    return row?.id ?? null;
  }

  /**
   * After an update failed: the subscription that holds (awb, callback) when the failure was a
   * unique violation (a concurrent write took them first). Any other failure, or one whose
   * subscription is gone again by now, is thrown as it was.
   */
  async function takenBy(error: unknown, clientId: string, { awb, callback }: SubscriptionFields): Promise<string> {
    if (sqlStateOf(error) !== UNIQUE_VIOLATION) throw error;
    const id = await existing(clientId, awb, callback);
    if (id === null) throw error;
    return id;
  }

  /**
   * After a unique violation: deletes an expired subscription holding (awb, callback), its queued
   * notifications marked dead first (as a create does); true when it found one, so the write can run
   * again. Each call deletes one for good, so the caller's retry cannot loop.
   */
  async function purgedExpired(error: unknown, clientId: string, { awb, callback }: SubscriptionFields) {
    if (sqlStateOf(error) !== UNIQUE_VIOLATION) return false;
    const results = await sql.script(expiredPurgeScript(sqlUuid(clientId), awb, callback));
    return (results[1]?.length ?? 0) > 0;
  }

  return {
    existing,

    /** Before the callback check: the client's subscription for (awb, callback) if any, and how many it has. */
    async standing(
      clientId: string,
      awb: string,
      callback: string,
    ): Promise<{ existing: string | null; count: number }> {
      const [row] = await sql.query<{ existing: string | null; count: number }>(
        `SELECT (SELECT id::text FROM subscription WHERE client_id = $1::uuid AND awb = $2 AND callback = $3 AND ${LIVE}) AS existing,
                (SELECT count(*)::int FROM subscription WHERE client_id = $1::uuid AND ${LIVE}) AS count`,
        [clientId, awb, callback],
      );
      return { existing: row?.existing ?? null, count: row?.count ?? 0 };
    },

    /** Inserts the subscription unless the client already has `cap` of them or one for (awb, callback). */
    async insertWithinCap(clientId: string, subscription: SubscriptionFields, cap: number): Promise<CappedInsert> {
      const results = await sql.script(insertWithinCapScript(clientId, randomUUID(), subscription, cap));
      const row = results[3]?.[0] as ({ count: number } & Partial<SubscriptionRow>) | undefined;
      if (row?.id != null) return { kind: "created", row: pick(row as SubscriptionRow) };
      const count = row?.count ?? 0;
      return count >= cap ? { kind: "limit", count } : { kind: "duplicate" };
    },

    async find(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const [row] = await sql.query<SubscriptionRow>(
        `SELECT ${COLUMNS} FROM subscription WHERE id = $1::uuid AND client_id = $2::uuid`,
        [id, clientId],
      );
      return row ?? null;
    },

    /**
     * Replaces the subscription in one statement when its callback stays the same (nothing to
     * check). Otherwise it writes nothing and says what stands in the way, in CONTRACT §2's order:
     * no such subscription, another one for the new (awb, callback), or a callback that changes.
     */
    async updateKeepingCallback(clientId: string, id: string, subscription: SubscriptionFields): Promise<Update> {
      const { awb, callback, states, expiresAt } = subscription;
      type Answer = { current: string | null; existing: string | null } & Partial<SubscriptionRow>;
      let row: Answer | undefined;
      try {
        [row] = await sql.query<Answer>(
          `WITH target AS (SELECT callback FROM subscription WHERE id = $1::uuid AND client_id = $2::uuid AND ${LIVE}),
                taken AS (
                  SELECT id FROM subscription
                  WHERE client_id = $2::uuid AND awb = $3 AND callback = $4 AND id <> $1::uuid AND ${LIVE}
                ),
                updated AS (
                  UPDATE subscription SET awb = $3, states = $5::text[], expires_at = $6::timestamptz, updated_at = clock_timestamp()
                  WHERE id = $1::uuid AND client_id = $2::uuid AND callback = $4 AND ${LIVE} AND NOT EXISTS (SELECT 1 FROM taken)
                  RETURNING ${COLUMNS}
                )
           SELECT (SELECT callback FROM target) AS current, (SELECT id::text FROM taken) AS existing, updated.*
           FROM (SELECT 1) AS one LEFT JOIN updated ON true`,
          [id, clientId, awb, callback, [...states], expiresAt?.toISOString() ?? null],
        );
      } catch (error) {
        // An expired subscription held the AWB and callback: it gives them up, and this runs again.
        if (await purgedExpired(error, clientId, subscription))
          return this.updateKeepingCallback(clientId, id, subscription);
        return { kind: "duplicate", existing: await takenBy(error, clientId, subscription) };
      }
      if (row?.id != null) return { kind: "updated", row: pick(row as SubscriptionRow) };
      if (row?.current == null) return { kind: "missing" };
      if (row.existing !== null) return { kind: "duplicate", existing: row.existing };
      // The callback differs, or a concurrent update changed it after this statement's snapshot.
      return { kind: "callbackDiffers", current: row.current };
    },

    /** Replaces every field, the callback included (checked by the caller). */
    async replace(
      clientId: string,
      id: string,
      subscription: SubscriptionFields,
    ): Promise<Exclude<Update, { kind: "callbackDiffers" }>> {
      const { awb, callback, states, expiresAt } = subscription;
      try {
        const [row] = await sql.query<SubscriptionRow>(
          `UPDATE subscription SET awb = $3, callback = $4, states = $5::text[], expires_at = $6::timestamptz,
             updated_at = clock_timestamp()
           WHERE id = $1::uuid AND client_id = $2::uuid AND ${LIVE}
           RETURNING ${COLUMNS}`,
          [id, clientId, awb, callback, [...states], expiresAt?.toISOString() ?? null],
        );
        return row ? { kind: "updated", row } : { kind: "missing" };
      } catch (error) {
        if (await purgedExpired(error, clientId, subscription)) return this.replace(clientId, id, subscription);
        return { kind: "duplicate", existing: await takenBy(error, clientId, subscription) };
      }
    },

    /**
     * Enables it again (clears disabled_at, its reason and the failing clock) and makes its parked
     * notifications due at once; null when there is none. Three statements in one transaction: the
     * row is locked FOR UPDATE first, which waits for every statement parking a delivery of it to
     * commit (they read it under a key-share lock, delivery.store.ts `subscriptionDisabled`) and keeps
     * new ones waiting until this commits; the last statement then reads every delivery they parked.
     */
    async enable(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const where = `id = ${sqlUuid(id)} AND client_id = ${sqlUuid(clientId)}`;
      const results = await sql.script(
        `SELECT 1 FROM subscription WHERE ${where} FOR UPDATE;
UPDATE subscription SET
  updated_at = CASE WHEN disabled_at IS NULL THEN updated_at ELSE clock_timestamp() END,
  disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
WHERE ${where}
RETURNING ${COLUMNS};
UPDATE delivery SET status = 'PENDING', next_attempt_at = now()
WHERE status = 'PARKED' AND subscription_id IN (SELECT id FROM subscription WHERE ${where})`,
      );
      const row = results[1]?.[0] as SubscriptionRow | undefined;
      return row ? pick(row) : null;
    },

    /** Deletes the subscription and returns it as it was; null when there is none. */
    async remove(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const [row] = await sql.query<SubscriptionRow>(
        `DELETE FROM subscription WHERE id = $1::uuid AND client_id = $2::uuid RETURNING ${COLUMNS}`,
        [id, clientId],
      );
      return row ?? null;
    },

    /** Up to `limit` of the client's subscriptions, oldest first (ties by id), after the cursor's row. */
    async list(
      clientId: string,
      filter: { awb?: string | undefined; callback?: string | undefined },
      after: { createdAt: Date; id: string } | undefined,
      limit: number,
    ): Promise<SubscriptionRow[]> {
      const params: unknown[] = [clientId];
      const where = ["client_id = $1::uuid"];
      if (filter.awb !== undefined) where.push(`awb = $${params.push(filter.awb)}`);
      if (filter.callback !== undefined) where.push(`callback = $${params.push(filter.callback)}`);
      if (after) {
        const at = params.push(after.createdAt);
        where.push(`(created_at, id) > ($${at}::timestamptz, $${params.push(after.id)}::uuid)`);
      }
      return sql.query<SubscriptionRow>(
        `SELECT ${COLUMNS} FROM subscription WHERE ${where.join(" AND ")}
         ORDER BY created_at, id LIMIT $${params.push(limit)}`,
        params,
      );
    },
  };
}

export type SubscriptionStore = ReturnType<typeof createSubscriptionStore>;

const pick = ({
  id,
  awb,
  callback,
  states,
  createdAt,
  updatedAt,
  expiresAt,
  disabledAt,
  disabledReason,
}: SubscriptionRow): SubscriptionRow => ({
  id,
  awb,
  callback,
  states,
  createdAt,
  updatedAt,
  expiresAt,
  disabledAt,
  disabledReason,
});
