import { randomUUID } from "node:crypto";
import { sqlStateOf } from "../db/availability";
import type { SqlExecutor } from "../db/database";
import { enable } from "./sql/enable.sql";
import { existing } from "./sql/existing.sql";
import { find } from "./sql/find.sql";
import { insertWithinCap } from "./sql/insert-within-cap.sql";
import { list } from "./sql/list.sql";
import { purgeExpired } from "./sql/purge-expired.sql";
import { remove } from "./sql/remove.sql";
import { replace } from "./sql/replace.sql";
import { standing } from "./sql/standing.sql";
import type { SubscriptionRow } from "./sql/subscription-columns";
import { updateKeepingCallback } from "./sql/update-keeping-callback.sql";

export type { SubscriptionRow } from "./sql/subscription-columns";

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

const UNIQUE_VIOLATION = "23505";

/**
 * The SQL of subscriptions, on the raw driver: these are one-row statements, whose cost through
 * Prisma was mostly Prisma's own per call (BENCHMARKS.md). Each method is one round trip; the service
 * makes one per operation, two for a create or a callback-changing update (the callback's check
 * between them). Every statement names the client, so another client's subscription is as absent as
 * a missing one.
 */
export function createSubscriptionStore(sql: SqlExecutor) {
  async function existingId(clientId: string, awb: string, callback: string): Promise<string | null> {
    const [row] = await existing.rows(sql, { clientId, awb, callback });
    return row?.id ?? null;
  }

  /**
   * After an update failed: the subscription that holds (awb, callback) when the failure was a
   * unique violation (a concurrent write took them first). Any other failure, or one whose
   * subscription is gone again by now, is thrown as it was.
   */
  async function takenBy(error: unknown, clientId: string, { awb, callback }: SubscriptionFields): Promise<string> {
    if (sqlStateOf(error) !== UNIQUE_VIOLATION) throw error;
    const id = await existingId(clientId, awb, callback);
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
    const results = await purgeExpired.run(sql, { clientId, awb, callback });
    return (results[1]?.length ?? 0) > 0;
  }

  /** The service's fields as the statements take them. */
  const written = ({ awb, callback, states, expiresAt }: SubscriptionFields) => ({
    awb,
    callback,
    states: [...states],
    expiresAt: expiresAt?.toISOString() ?? null,
  });

  return {
    existing: existingId,

    /** Before the callback check: the client's subscription for (awb, callback) if any, and how many it has. */
    async standing(
      clientId: string,
      awb: string,
      callback: string,
    ): Promise<{ existing: string | null; count: number }> {
      const [row] = await standing.rows(sql, { clientId, awb, callback });
      return { existing: row?.existing ?? null, count: row?.count ?? 0 };
    },

    /** Inserts the subscription unless the client already has `cap` of them or one for (awb, callback). */
    async insertWithinCap(clientId: string, subscription: SubscriptionFields, cap: number): Promise<CappedInsert> {
      const results = await insertWithinCap.run(sql, {
        id: randomUUID(),
        clientId,
        ...written(subscription),
        cap,
      });
      const row = results[3]?.[0] as ({ count: number } & Partial<SubscriptionRow>) | undefined;
      if (row?.id != null) return { kind: "created", row: pick(row as SubscriptionRow) };
      const count = row?.count ?? 0;
      return count >= cap ? { kind: "limit", count } : { kind: "duplicate" };
    },

    async find(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const [row] = await find.rows(sql, { id, clientId });
      return row ?? null;
    },

    /**
     * Replaces the subscription in one statement when its callback stays the same (nothing to
     * check). Otherwise it writes nothing and says what stands in the way, in CONTRACT §2's order:
     * no such subscription, another one for the new (awb, callback), or a callback that changes.
     */
    async updateKeepingCallback(clientId: string, id: string, subscription: SubscriptionFields): Promise<Update> {
      let row: Awaited<ReturnType<typeof updateKeepingCallback.rows>>[number] | undefined;
      try {
        [row] = await updateKeepingCallback.rows(sql, { id, clientId, ...written(subscription) });
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
      try {
        const [row] = await replace.rows(sql, { id, clientId, ...written(subscription) });
        return row ? { kind: "updated", row } : { kind: "missing" };
      } catch (error) {
        if (await purgedExpired(error, clientId, subscription)) return this.replace(clientId, id, subscription);
        return { kind: "duplicate", existing: await takenBy(error, clientId, subscription) };
      }
    },

    /** Enables it again and makes its parked notifications due at once; null when there is none. */
    async enable(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const results = await enable.run(sql, { id, clientId });
      const row = results[1]?.[0] as SubscriptionRow | undefined;
      return row ? pick(row) : null;
    },

    /** Deletes the subscription and returns it as it was; null when there is none. */
    async remove(clientId: string, id: string): Promise<SubscriptionRow | null> {
      const [row] = await remove.rows(sql, { id, clientId });
      return row ?? null;
    },

    /** Up to `limit` of the client's subscriptions, oldest first (ties by id), after the cursor's row. */
    async list(
      clientId: string,
      filter: { awb?: string | undefined; callback?: string | undefined },
      after: { createdAt: Date; id: string } | undefined,
      limit: number,
    ): Promise<SubscriptionRow[]> {
      return list.rows(sql, {
        clientId,
        awb: filter.awb ?? null,
        callback: filter.callback ?? null,
        afterCreatedAt: after?.createdAt ?? null,
        afterId: after?.id ?? null,
        limit,
      });
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
