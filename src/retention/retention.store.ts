import type { Prisma } from "../db/database";
import type { RetentionKind } from "../domain/retention";
import { expirePending } from "./sql/expire-pending.sql";
import {
  pruneCarrierStatuses,
  pruneDeadDeliveries,
  pruneDeliveredDeliveries,
  pruneEvents,
  pruneExpiredSubscriptions,
} from "./sql/prune-batch.sql";
import {
  pruneAccessDelegations,
  pruneNotificationsReceived,
  pruneOneRecordSubscriptions,
  pruneProposals,
} from "./sql/prune-onerecord.sql";
import { prunedThrough } from "./sql/pruned-through.sql";
import { tableSizes } from "./sql/table-sizes.sql";
import { vacuum } from "../db/sql/vacuum.sql";

export type { RetentionKind } from "../domain/retention";

const PRUNE_BATCH = {
  delivered_deliveries: pruneDeliveredDeliveries,
  dead_deliveries: pruneDeadDeliveries,
  carrier_statuses: pruneCarrierStatuses,
  expired_subscriptions: pruneExpiredSubscriptions,
  onerecord_subscriptions: pruneOneRecordSubscriptions,
  onerecord_proposals: pruneProposals,
  onerecord_notifications_received: pruneNotificationsReceived,
  onerecord_access_delegations: pruneAccessDelegations,
} as const;

/** The tables each kind's deletions leave dead rows in (cascades included). */
export const TABLES_OF: Record<RetentionKind, readonly string[]> = {
  delivered_deliveries: ["delivery", "delivery_attempt"],
  dead_deliveries: ["delivery", "delivery_attempt"],
  events: ["status_event", "delivery", "delivery_attempt", "awb_stream_pruned", "logistics_event"],
  carrier_statuses: ["carrier_status"],
  expired_subscriptions: ["subscription", "delivery"],
  // Only those with no delivery left go, so none is set to null.
  onerecord_subscriptions: ["onerecord_subscription"],
  onerecord_proposals: ["onerecord_proposal"],
  onerecord_notifications_received: ["onerecord_notification_received"],
  // Only those holding no grant go, so none is set to null.
  onerecord_access_delegations: ["onerecord_access_delegation"],
};
const MEASURED: string[] = [
  "status_event",
  "carrier_status",
  "delivery",
  "delivery_attempt",
  "subscription",
  "awb_stream",
  "awb_stream_pruned",
  "onerecord_subscription",
  "onerecord_proposal",
  "onerecord_notification_received",
  "onerecord_access_delegation",
];

export function createRetentionStore(prisma: Prisma) {
  return {
    /**
     * VACUUM (ANALYZE) of the tables. For the embedded database, which runs no autovacuum (PGlite is
     * PostgreSQL in single-user mode): without it, deleted rows would keep their space for ever.
     */
    vacuum: (tables: readonly string[]): Promise<number> => vacuum(tables).affectedRows(prisma, {}),

    /** Each table's size on disk (indexes and TOAST included) and its estimated row count. */
    async tableSizes(): Promise<Array<{ table: string; bytes: number; rows: number }>> {
      const rows = await tableSizes.rows(prisma, { tables: MEASURED });
      return rows.map((r) => ({ table: r.table, bytes: Number(r.bytes), rows: Number(r.rows) }));
    },

    /** Marks one batch of expired (or long disabled) subscriptions' pending deliveries dead; answers how many. */
    expirePendingBatch: (limit: number, disabledBefore: Date | null): Promise<number> =>
      expirePending.affectedRows(prisma, { limit, disabledBefore: disabledBefore?.toISOString() ?? null }),
    /** Deletes one batch of `kind` older than `before`; answers how many rows went. */
    async pruneBatch(kind: RetentionKind, before: Date, limit: number): Promise<number> {
      const batch = { before: before.toISOString(), limit };
      if (kind !== "events") return PRUNE_BATCH[kind].affectedRows(prisma, batch);
      // Its statement ends in a SELECT of the count (the deletion feeds the marks).
      const [row] = await pruneEvents.rows(prisma, batch);
      return Number(row?.n ?? 0);
    },
    /** The highest position retention has deleted from `awb`'s stream; 0 when none. */
    prunedThrough: async (awb: string): Promise<number> => {
      const [row] = await prunedThrough.rows(prisma, { awb });
      return Number(row?.pruned_through ?? 0);
    },
  };
}

export type RetentionStore = ReturnType<typeof createRetentionStore>;
