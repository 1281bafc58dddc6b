import { randomUUID } from "node:crypto";
import type { Prisma } from "../db/database";

/** A subscription row as the service reads it. */
export interface SubscriptionRow {
  id: string;
  awb: string;
  callback: string;
  states: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** What a capped insert did: stored the row, found the client at its cap, or met the same (AWB, callback). */
export type CappedInsert =
  { kind: "created"; row: SubscriptionRow } | { kind: "limit"; count: number } | { kind: "duplicate" };

/**
 * The SQL of creating a subscription under the client's cap (CONTRACT §2: past it, create answers
 * 409). The cap holds under concurrency: the insert counts and writes in one statement, after taking
 * the client's row lock in the same transaction, so concurrent creates of one client run their
 * count-and-insert one after the other and each counts the rows of those before it.
 */
export function createSubscriptionStore(prisma: Prisma) {
  return {
    /** Before the callback check: the client's subscription for (awb, callback) if any, and how many it has. */
    async standing(
      clientId: string,
      awb: string,
      callback: string,
    ): Promise<{ existing: string | null; count: number }> {
      const [row] = await prisma.$queryRawUnsafe<Array<{ existing: string | null; count: number }>>(
        `SELECT (SELECT id::text FROM subscription WHERE client_id = $1::uuid AND awb = $2 AND callback = $3) AS existing,
                (SELECT count(*)::int FROM subscription WHERE client_id = $1::uuid) AS count`,
        clientId,
        awb,
        callback,
      );
      return { existing: row?.existing ?? null, count: row?.count ?? 0 };
    },

    /**
     * Inserts the subscription unless the client already has `cap` of them or one for (awb, callback).
     * The lock is the client's row (FOR NO KEY UPDATE: it does not block the key-share locks that
     * inserts referencing the client take); it is held until the transaction ends. The insert runs
     * as the next statement, so its count sees every create that held the lock before.
     */
    async insertWithinCap(
      clientId: string,
      subscription: { awb: string; callback: string; states: readonly string[] },
      cap: number,
    ): Promise<CappedInsert> {
      const [, rows] = await prisma.$transaction([
        prisma.$queryRawUnsafe(`SELECT 1 FROM client WHERE id = $1::uuid FOR NO KEY UPDATE`, clientId),
        prisma.$queryRawUnsafe<Array<{ count: number } & Partial<SubscriptionRow>>>(
          `WITH counted AS (SELECT count(*)::int AS n FROM subscription WHERE client_id = $1::uuid),
                stamp AS (SELECT clock_timestamp() AS at),
                inserted AS (
                  INSERT INTO subscription (id, client_id, awb, callback, states, created_at, updated_at)
                  SELECT $2::uuid, $1::uuid, $3, $4, $5::text[], stamp.at, stamp.at FROM counted, stamp WHERE counted.n < $6
                  ON CONFLICT (client_id, awb, callback) DO NOTHING
                  RETURNING id::text AS id, awb, callback, states, created_at AS "createdAt", updated_at AS "updatedAt"
                )
           SELECT counted.n AS count, inserted.* FROM counted LEFT JOIN inserted ON true`,
          clientId,
          randomUUID(),
          subscription.awb,
          subscription.callback,
          [...subscription.states],
          cap,
        ),
      ]);
      const row = rows[0];
      if (row?.id != null) {
        const { id, awb, callback, states, createdAt, updatedAt } = row as SubscriptionRow;
        return { kind: "created", row: { id, awb, callback, states, createdAt, updatedAt } };
      }
      const count = row?.count ?? 0;
      return count >= cap ? { kind: "limit", count } : { kind: "duplicate" };
    },
  };
}

export type SubscriptionStore = ReturnType<typeof createSubscriptionStore>;
