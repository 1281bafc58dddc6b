import { sqlStateOf } from "../db/availability";
import type { Prisma } from "../db/database";
import { awbProblem, parseAwb } from "../domain/awb";
import { clientEventIdOf, dedupeKeyOf, type EventSender, legacyKeyOf } from "../domain/event-id";
import { groupBy } from "../domain/group-by";
import { matchesState } from "../domain/status";
import { AppError, validationError } from "../errors";
import { randomUUID } from "node:crypto";
import { type ClaimedDelivery, type NewDelivery, queueDeliveries } from "../delivery/delivery.store";
import type { DeliveryHandoff } from "../delivery/delivery.worker";
import { isHeldCallback } from "../delivery/held-callback";
import { notificationBody, originOf } from "../delivery/notification";
import { activeTraceParent, inSpan } from "../tracing/spans";
import type { MilestoneInput } from "./milestone.validate";
import {
  createMilestoneStore,
  type NewMilestone,
  type OneRecordTopics,
  PositionConflict,
  type StoredMilestone,
  type SubscriptionOfAwbsRow,
} from "./milestone.store";
import {
  type CarrierStatusRow,
  carrierStatusesOf,
  recordCarrierStatuses,
  type RecordedStatus,
  type StoredCarrierStatus,
} from "./carrier-status.store";

export type { StoredMilestone } from "./milestone.store";

export interface IngestResult {
  /** The stored event's id (for a duplicate: the id stored the first time). */
  eventId: string;
  /** The caller's eventId, or null when it gave none. */
  clientEventId: string | null;
  duplicate: boolean;
  /** Subscriptions notified of this event, webhook and ONE Record ones (0 for a duplicate). */
  matchedSubscriptions: number;
}

/**
 * What a caller writes in an ingestion's transaction, once the events are stored and before it
 * commits, knowing each event's outcome (the stored id, or the original's for a repeat): a ONE Record
 * event posted as a milestone keeps its posted body this way, committed with the milestone or not at
 * all. Runs again on each attempt.
 */
export type AlongsideIngestion = (
  tx: Pick<Prisma, "$queryRawUnsafe" | "$executeRawUnsafe">,
  results: readonly IngestResult[],
) => Promise<void>;

/**
 * The ONE Record notifications of an ingestion (wired by the composition): which ONE Record topics its
 * subscription lookup asks about (none: no objectIds), and the deliveries for what it stored, queued
 * with the webhooks. `awbs`: those of the milestones stored; `firstAwbs`: the AWBs whose streams were
 * empty before this ingestion (their first milestone is among `stored`); `statuses`: the carrier
 * statuses recorded now that are no milestones (a repeated message's: none).
 */
export interface NotifyAlso {
  topics(awbs: readonly string[], firstAwbs: readonly string[], statuses: readonly RecordedStatus[]): OneRecordTopics;
  deliveries(
    tx: Pick<Prisma, "$queryRawUnsafe">,
    stored: readonly StoredMilestone[],
    firstAwbs: readonly string[],
    subscriptions: readonly SubscriptionOfAwbsRow[],
    statuses: readonly RecordedStatus[],
  ): Promise<NewDelivery[]>;
}

const NO_TOPICS: OneRecordTopics = { objectIds: [], classes: [], eventTypes: [] };

/** What an ingestion's milestones stored: their AWBs' stream heads before, the new ones, each repeat's original. */
interface StoredMilestones {
  heads: ReadonlyMap<string, bigint>;
  created: StoredMilestone[];
  createdByKey: ReadonlyMap<string, StoredMilestone>;
  /** A repeated event's dedupe key → its original's id. */
  originals: ReadonlyMap<string, string>;
}

const nothingStored = (): StoredMilestones => ({
  heads: new Map(),
  created: [],
  createdByKey: new Map(),
  originals: new Map(),
});

const MAX_INGEST_ATTEMPTS = 3;
/**
 * 40P01: chosen to break a deadlock (rare: stream rows are locked in AWB order); 40001: a serialisation
 * failure; 23503: a subscription read for its deliveries was deleted before they were inserted (the
 * next attempt no longer finds it).
 */
const isRetryable = (error: unknown) => ["40P01", "40001", "23503"].includes(sqlStateOf(error) ?? "");

/**
 * Raised inside an ingestion transaction when a repeated event's original was found by the insert
 * and is gone at the next statement (retention), and storing the event anew found its key taken
 * again meanwhile; the transaction is retried.
 */
class OriginalMoved extends Error {
  constructor() {
    super("a repeated event's original was deleted and its key stored again while the ingestion ran");
  }
}

/**
 * Milestone ingestion (CONTRACT §6). The events, and one pending delivery per matching subscription,
 * are written in ONE transaction before the caller is answered: a delivery can never be lost between
 * accepting an event and queuing its notifications. Live subscribers and the delivery worker are told
 * only after the commit (`onCommitted`).
 */
export function createMilestoneService({
  prisma,
  onCommitted,
  handoff,
  afterInsert,
  notifyAlso,
}: {
  prisma: Prisma;
  /** After each commit that stored events; `deliveries`: those queued for any worker to claim. */
  onCommitted: (events: StoredMilestone[], deliveries: number) => void;
  /** This process's delivery worker, when it runs here. */
  handoff?: DeliveryHandoff | undefined;
  /**
   * Runs in the ingestion's transaction between the insert of the new events and the read of the
   * originals of repeated ones: a seam for tests to drive what can happen between those statements
   * (retention deleting an original). The gateway sets none.
   */
  afterInsert?: ((tx: Pick<Prisma, "$executeRawUnsafe" | "$queryRawUnsafe">) => Promise<void>) | undefined;
  /**
   * The deliveries besides the webhooks that the stored milestones cause (ONE Record notifications,
   * wired by the composition), queued with the webhooks in the same transaction and statement.
   */
  notifyAlso?: NotifyAlso | undefined;
}) {
  const store = createMilestoneStore(prisma);

  /** One attempt at the transaction, in a span of its own (a retry is another): docs/OPERATIONS.md "Tracing". */
  function ingestOnce(...args: Parameters<typeof transactionOnce>) {
    const [events, , , statuses] = args;
    const attributes = { "cargo.ingest.events": events.length, "cargo.ingest.carrier_statuses": statuses.length };
    return inSpan("ingest transaction", attributes, (span) =>
      transactionOnce(...args).then((outcome) => {
        span?.setAttributes({
          "cargo.ingest.stored": outcome.stored.length,
          "cargo.ingest.deliveries": outcome.deliveryCount,
        });
        return outcome;
      }),
    );
  }

  /**
   * Stores the milestones in the ingestion's transaction, under their AWBs' stream locks (held until it
   * ends): what was stored (by dedupe key) and each repeat's original, with the streams' heads before.
   */
  async function storeMilestones(
    tx: Pick<Prisma, "$queryRawUnsafe" | "$executeRawUnsafe">,
    events: MilestoneInput[],
    keys: string[],
    receivedAt: Date,
  ): Promise<StoredMilestones> {
    const rows: NewMilestone[] = events.map((e, i) => ({
      dedupeKey: keys[i]!,
      legacyKey: legacyKeyOf(e),
      awb: e.awb,
      state: e.state,
      occurredAt: e.occurredAt,
      toaTimestamp: e.toaTimestamp,
      station: e.station,
      flight: e.flight,
    }));
    // Stream locks first (see milestone.store.ts): this AWB's positions are now ours to hand out.
    const heads = await store.lockStreams(tx, [...new Set(events.map((e) => e.awb))]);
    const created = await store.insertNumbered(tx, rows, receivedAt, heads);
    const createdByKey = new Map(created.map((c) => [c.dedupeKey, c]));
    // The first event of each key not stored now (as the insert takes the first of repeats).
    const repeated: NewMilestone[] = [];
    const keysSeen = new Set<string>();
    for (const r of rows) {
      if (keysSeen.has(r.dedupeKey)) continue;
      keysSeen.add(r.dedupeKey);
      if (!createdByKey.has(r.dedupeKey)) repeated.push(r);
    }
    await afterInsert?.(tx);
    const originals = await store.originalsOf(tx, repeated);
    const gone = repeated.filter((r) => !originals.has(r.dedupeKey));
    if (gone.length > 0) {
      // Retention deleted the original after the insert saw it: its key is free, and the event is
      // stored as new, as the same event sent a moment later would be (docs/INGESTION.md).
      const moved = await store.lockStreams(tx, [...new Set(gone.map((r) => r.awb))]);
      const again = await store.insertNumbered(tx, gone, receivedAt, moved);
      if (again.length < gone.length) throw new OriginalMoved();
      created.push(...again);
      for (const c of again) createdByKey.set(c.dedupeKey, c);
    }
    return { heads, created, createdByKey, originals };
  }

  async function transactionOnce(
    events: MilestoneInput[],
    keys: string[],
    receivedAt: Date,
    statuses: readonly CarrierStatusRow[],
    alongside: AlongsideIngestion | undefined,
  ) {
    const lease = { token: randomUUID(), ms: handoff?.leaseMs ?? 0 };
    // Stored with the deliveries: their sends continue this trace, in whichever process claims them.
    const traceParent = activeTraceParent() ?? null;
    return prisma.$transaction(
      async (tx) => {
        // A carrier message with no gateway status (FOH, customs codes…) stores no milestone.
        const { heads, created, createdByKey, originals } =
          events.length === 0 ? nothingStored() : await storeMilestones(tx, events, keys, receivedAt);
        // Once every stream lock is held: no stream lock is then waited for while a status key is held.
        const recorded = await recordCarrierStatuses(tx, statuses, receivedAt);
        const newStatuses = recorded.filter((status) => !status.mapped);
        const seen = new Set<string>();

        const awbs = [...new Set(created.map((c) => c.awb))];
        const createdAwbs = new Set(awbs);
        const firstAwbs = [...heads].filter(([awb, head]) => head === 0n && createdAwbs.has(awb)).map(([awb]) => awb);
        // One statement for both kinds: it runs for every ingestion that stores milestones, or records
        // statuses ONE Record notifies.
        const subscriptions = await store.subscriptionsOf(
          tx,
          awbs,
          receivedAt,
          notifyAlso?.topics(awbs, firstAwbs, newStatuses) ?? NO_TOPICS,
        );
        const byAwb = groupBy(subscriptions.webhooks, (s) => s.awb);

        const deliveries: NewDelivery[] = [];
        const results: IngestResult[] = keys.map((key) => {
          const event = createdByKey.get(key);
          const clientEventId = clientEventIdOf(key);
          if (!event || seen.has(key))
            return {
              // One or the other: a key not stored now had its original found, or was stored again above.
              eventId: event?.id ?? originals.get(key)!,
              clientEventId,
              duplicate: true,
              matchedSubscriptions: 0,
            };
          seen.add(key);
          const matching = (byAwb.get(event.awb) ?? []).filter((s) => matchesState(s.states, event.state));
          for (const s of matching) {
            deliveries.push({
              id: randomUUID(),
              leased: false,
              eventId: event.id,
              subscriptionId: s.id,
              clientId: s.clientId,
              callback: s.callback,
              origin: originOf(s.callback),
              payload: notificationBody({
                subscriptionId: s.id,
                awb: event.awb,
                state: event.state,
                toaTimestamp: event.toaTimestamp,
                receivedAt: event.receivedAt,
              }),
            });
          }
          return { eventId: event.id, clientEventId, duplicate: false, matchedSubscriptions: matching.length };
        });
        if (notifyAlso && (subscriptions.oneRecord.length > 0 || firstAwbs.length > 0)) {
          const oneRecord = await notifyAlso.deliveries(tx, created, firstAwbs, subscriptions.oneRecord, newStatuses);
          deliveries.push(...oneRecord);
          countOneRecordSubscribers(results, oneRecord);
        }
        // This process's worker takes what it has room for straight from the commit (no claim query).
        const room = new Map<string, number>();
        for (const d of deliveries) {
          if (!handoff) break;
          // A held one names no receiver yet: it waits parked (delivery/held-callback.ts), never sent.
          if (isHeldCallback(d.callback)) continue;
          let left = room.get(d.origin);
          if (left === undefined) left = handoff.room(d.origin);
          d.leased = left > 0;
          room.set(d.origin, left - 1);
        }
        await queueDeliveries(tx, deliveries, lease, traceParent);
        if (events.length > 0) await alongside?.(tx, results);
        const handedOff: ClaimedDelivery[] = deliveries
          .filter((d) => d.leased)
          .map((d) => ({
            id: d.id,
            leaseToken: lease.token,
            kind: d.kind ?? "WEBHOOK",
            clientId: d.clientId,
            callback: d.callback,
            origin: d.origin,
            payload: d.payload,
            attemptCount: 0,
            eventReceivedAt: receivedAt,
            traceParent,
          }));
        return { results, stored: created, deliveryCount: deliveries.length, handedOff };
      },
      // READ COMMITTED whatever a PostgreSQL server's default: the numbering relies on each statement
      // seeing what committed before it (milestone.store.ts). PGlite's adapter sets the level before
      // BEGIN, where it has no effect; PGlite runs at its default, which is READ COMMITTED too.
      { timeout: 60_000, maxWait: 10_000, isolationLevel: "ReadCommitted" },
    );
  }

  return {
    /**
     * Stores the milestones and, in the same transaction, the carrier statuses they were read from
     * (with those that are no milestones): a message's history is recorded whole or not at all.
     * `sender`: whose eventIds these are (a repeat is a duplicate of the same sender's event only,
     * domain/event-id.ts); the transports name the calling client, the broker consumer the queue.
     * `alongside`: written in the same transaction (AlongsideIngestion).
     */
    async ingest(
      events: MilestoneInput[],
      receivedAt = new Date(),
      statuses: readonly CarrierStatusRow[] = [],
      sender: EventSender = "broker",
      alongside?: AlongsideIngestion,
    ): Promise<IngestResult[]> {
      const keys = events.map((e) => dedupeKeyOf(e, sender));
      for (let attempt = 1; ; attempt++) {
        try {
          // The lease clock starts before the transaction (whose now() sets the leases' end).
          const claimStartedAt = performance.now();
          const { results, stored, deliveryCount, handedOff } = await ingestOnce(
            events,
            keys,
            receivedAt,
            statuses,
            alongside,
          );
          if (handedOff.length > 0) handoff?.take(handedOff, claimStartedAt);
          if (stored.length > 0) onCommitted(stored, deliveryCount - handedOff.length);
          return results;
        } catch (error) {
          // Resolved by running again: the other transaction has ended by then.
          if (!(error instanceof PositionConflict || error instanceof OriginalMoved || isRetryable(error))) throw error;
          if (attempt >= MAX_INGEST_ATTEMPTS)
            throw new AppError(
              "SERVICE_UNAVAILABLE",
              "Concurrent ingestions kept conflicting; nothing was stored, try again",
              { retryAfterSeconds: 1 },
            );
        }
      }
    },

    /** One AWB's events after `position`, in stream order, at most `limit` (page with the last position). */
    after: (awb: string, position: bigint, limit: number) => store.after(awb, position, limit),
    /** The last position of each AWB's stream (0 when it has none). */
    heads: (awbs: readonly string[]) => store.heads(awbs),

    /** The stored milestones of an AWB (any accepted spelling), in the order they happened; at most 1,000. */
    async history(awbInput: unknown): Promise<StoredMilestone[]> {
      return prisma.statusEvent.findMany({
        where: { awb: awbOf(awbInput) },
        orderBy: [{ occurredAt: "asc" }, { position: "asc" }],
        take: 1_000,
      });
    },

    /** The statuses carrier messages reported for an AWB (any accepted spelling), mapped or not; at most 1,000. */
    async carrierStatuses(awbInput: unknown): Promise<StoredCarrierStatus[]> {
      return carrierStatusesOf(prisma, awbOf(awbInput));
    },
  };
}

/** The canonical AWB of a read's argument, or VALIDATION_FAILED naming `awb`. */
function awbOf(awbInput: unknown): string {
  const problem = awbProblem(awbInput);
  if (problem !== null) throw validationError([{ field: "awb", message: problem }]);
  return parseAwb(awbInput as string)!.canonical;
}

export type MilestoneService = ReturnType<typeof createMilestoneService>;

/**
 * Adds to each stored milestone's matchedSubscriptions the ONE Record subscriptions notified of it: a
 * caller learns how many subscribers a milestone reached, whichever kind they are.
 */
function countOneRecordSubscribers(results: IngestResult[], deliveries: readonly NewDelivery[]): void {
  const subscribers = new Map<string, Set<string>>();
  for (const d of deliveries) {
    if (d.eventId === null || !d.oneRecordSubscriptionId) continue;
    const of = subscribers.get(d.eventId) ?? new Set<string>();
    of.add(d.oneRecordSubscriptionId);
    subscribers.set(d.eventId, of);
  }
  for (const result of results)
    if (!result.duplicate) result.matchedSubscriptions += subscribers.get(result.eventId)?.size ?? 0;
}
