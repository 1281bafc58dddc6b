import type { Prisma } from "../db/database";
import { jsonColumn } from "../db/sql-statement";
import { groupBy } from "../domain/group-by";
import { insertNumbered } from "./sql/insert-numbered.sql";
import { lockStreams } from "./sql/lock-streams.sql";
import type { StoredMilestone } from "./sql/milestone-columns";
import { originalsOf } from "./sql/originals-of.sql";
import { streamAfter } from "./sql/stream-after.sql";
import { streamHeads } from "./sql/stream-heads.sql";
import { type SubscriptionOfAwbsRow, subscriptionsOfAwbs } from "./sql/subscriptions-of-awbs.sql";

export type { SubscriptionOfAwbsRow } from "./sql/subscriptions-of-awbs.sql";

/** A legacy subscription an ingestion notifies. */
export interface LegacySubscription {
  id: string;
  clientId: string;
  callback: string;
  /** Canonical states, or ["*"]. */
  states: string[];
  awb: string;
}

/**
 * The ONE Record topics an ingestion's lookup asks about; none (no objectIds: every topic is of an AWB
 * with something to notify) finds no ONE Record subscription.
 */
export interface OneRecordTopics {
  readonly objectIds: readonly string[];
  readonly classes: readonly string[];
  readonly eventTypes: readonly string[];
}

export type { StoredMilestone } from "./sql/milestone-columns";

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

type Tx = Pick<Prisma, "$queryRawUnsafe">;

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
      const rows = await lockStreams.rows(tx, { awbs: [...awbs].sort() });
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
      const created = await insertNumbered.rows(tx, {
        dedupeKeys: jsonColumn(events.map((e) => e.dedupeKey)),
        awbs: jsonColumn(events.map((e) => e.awb)),
        states: jsonColumn(events.map((e) => e.state)),
        occurredAt: jsonColumn(events.map((e) => e.occurredAt.toISOString())),
        receivedAt: receivedAt.toISOString(),
        toaTimestamps: jsonColumn(events.map((e) => e.toaTimestamp?.toISOString() ?? null)),
        stations: jsonColumn(events.map((e) => e.station)),
        flights: jsonColumn(events.map((e) => e.flight)),
        legacyKeys: jsonColumn(events.map((e) => e.legacyKey)),
      });
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
      const rows = await originalsOf.rows(tx, {
        dedupeKeys: events.map((e) => e.dedupeKey),
        legacyKeys: events.map((e) => e.legacyKey),
        awbs: events.map((e) => e.awb),
        states: events.map((e) => e.state),
      });
      return new Map(rows.map((r) => [r.k, r.id]));
    },

    /**
     * The subscriptions the milestones of `awbs` received at `receivedAt` may notify: the legacy ones
     * of those AWBs, and the ONE Record ones of `oneRecord`'s topics (SubscriptionOfAwbsRow). No
     * statement when there are neither AWBs nor topics.
     */
    async subscriptionsOf(
      tx: Tx,
      awbs: readonly string[],
      receivedAt: Date,
      oneRecord: OneRecordTopics,
    ): Promise<{ webhooks: LegacySubscription[]; oneRecord: SubscriptionOfAwbsRow[] }> {
      if (awbs.length === 0 && oneRecord.objectIds.length === 0) return { webhooks: [], oneRecord: [] };
      const rows = await subscriptionsOfAwbs.rows(tx, {
        awbs: [...awbs],
        receivedAt: receivedAt.toISOString(),
        objectIds: [...oneRecord.objectIds],
        classes: [...oneRecord.classes],
        eventTypes: [...oneRecord.eventTypes],
      });
      return {
        webhooks: rows
          .filter((r) => r.kind === "WEBHOOK")
          .map((r) => ({ id: r.id, clientId: r.client_id!, callback: r.target, states: r.list, awb: r.topic })),
        oneRecord: rows.filter((r) => r.kind === "ONE_RECORD"),
      };
    },

    /** The stored events of one AWB after `position`, in stream order, at most `limit`. */
    async after(awb: string, position: bigint, limit: number): Promise<StoredMilestone[]> {
      const rows = await streamAfter.rows(prisma, { awb, position, limit });
      return rows.map((r) => ({ ...r, position: BigInt(r.position), seq: BigInt(r.seq) }));
    },

    /** The last position of each AWB's stream (0 for an AWB with no events). */
    async heads(awbs: readonly string[]): Promise<Map<string, bigint>> {
      const rows = await streamHeads.rows(prisma, { awbs: [...awbs] });
      const heads = new Map<string, bigint>(awbs.map((a) => [a, 0n]));
      for (const r of rows) heads.set(r.awb, BigInt(r.last_position));
      return heads;
    },
  };
}

export type MilestoneStore = ReturnType<typeof createMilestoneStore>;
