import type { Prisma } from "../db/database";
import { matchesState } from "../domain/status";
import { notificationBody, originOf } from "../delivery/notification";
import type { MilestoneInput } from "./milestone.validate";

export interface StoredMilestone {
  id: string;
  seq: bigint;
  awb: string;
  state: string;
  occurredAt: Date;
  receivedAt: Date;
  toaTimestamp: Date | null;
  station: string | null;
  flight: string | null;
}

export interface IngestResult {
  /** The stored event's id (for a duplicate: the id stored the first time). */
  eventId: string;
  duplicate: boolean;
  /** Subscriptions notified of this event (0 for a duplicate). */
  matchedSubscriptions: number;
}

/** Chunk size for multi-row inserts, well under PostgreSQL's 65,535 bind parameters. */
const INSERT_CHUNK = 2_000;

/** The dedupe key: the caller's eventId, or the milestone's identity when it gave none. */
export function dedupeKeyOf(event: MilestoneInput): string {
  return event.eventId !== null ? `id:${event.eventId}` : `awb:${event.awb}|${event.state}|${event.occurredAt.toISOString()}`;
}

/**
 * Milestone ingestion (CONTRACT §6). The events, and one pending delivery per matching subscription,
 * are written in ONE transaction before the caller is answered: a delivery can never be lost between
 * accepting an event and queuing its notifications. Live subscribers and the delivery worker are told
 * only after the commit (`onCommitted`).
 */
export function createMilestoneService({ prisma, onCommitted }: { prisma: Prisma; onCommitted: (events: StoredMilestone[], deliveries: number) => void }) {
  return {
    async ingest(events: MilestoneInput[], receivedAt = new Date()): Promise<IngestResult[]> {
      const keys = events.map(dedupeKeyOf);
      const { results, stored, deliveryCount } = await prisma.$transaction(
        async (tx) => {
          const created = await tx.statusEvent.createManyAndReturn({
            data: events.map((e, i) => ({
              dedupeKey: keys[i]!,
              awb: e.awb,
              state: e.state,
              occurredAt: e.occurredAt,
              receivedAt,
              toaTimestamp: e.toaTimestamp,
              station: e.station,
              flight: e.flight,
            })),
            skipDuplicates: true,
          });
          const createdByKey = new Map(created.map((c) => [c.dedupeKey, c]));
          const seen = new Set<string>();
          const repeatedKeys = keys.filter((k) => !createdByKey.has(k));
          const earlier = repeatedKeys.length === 0 ? [] : await tx.statusEvent.findMany({ where: { dedupeKey: { in: repeatedKeys } }, select: { id: true, dedupeKey: true } });
          const earlierByKey = new Map(earlier.map((e) => [e.dedupeKey, e.id]));

          const awbs = [...new Set(created.map((c) => c.awb))];
          const subscriptions = awbs.length === 0 ? [] : await tx.subscription.findMany({ where: { awb: { in: awbs } }, select: { id: true, clientId: true, callback: true, states: true, awb: true } });
          const byAwb = new Map<string, typeof subscriptions>();
          for (const s of subscriptions) byAwb.set(s.awb, [...(byAwb.get(s.awb) ?? []), s]);

          const deliveries: Array<{ eventId: string; subscriptionId: string; clientId: string; callback: string; origin: string; payload: string }> = [];
          const results: IngestResult[] = keys.map((key) => {
            const event = createdByKey.get(key);
            if (!event || seen.has(key)) return { eventId: event?.id ?? earlierByKey.get(key)!, duplicate: true, matchedSubscriptions: 0 };
            seen.add(key);
            const matching = (byAwb.get(event.awb) ?? []).filter((s) => matchesState(s.states, event.state));
            for (const s of matching) {
              deliveries.push({
                eventId: event.id,
                subscriptionId: s.id,
                clientId: s.clientId,
                callback: s.callback,
                origin: originOf(s.callback),
                payload: notificationBody({ subscriptionId: s.id, awb: event.awb, state: event.state, toaTimestamp: event.toaTimestamp, receivedAt: event.receivedAt }),
              });
            }
            return { eventId: event.id, duplicate: false, matchedSubscriptions: matching.length };
          });
          for (let i = 0; i < deliveries.length; i += INSERT_CHUNK) {
            await tx.delivery.createMany({ data: deliveries.slice(i, i + INSERT_CHUNK) });
          }
          return { results, stored: created as StoredMilestone[], deliveryCount: deliveries.length };
        },
        { timeout: 60_000, maxWait: 10_000 },
      );
      if (stored.length > 0) onCommitted(stored, deliveryCount);
      return results;
    },

    /** The stored milestones of an AWB, in the order they happened. */
    async history(awb: string, { after }: { after?: bigint } = {}): Promise<StoredMilestone[]> {
      return prisma.statusEvent.findMany({
        where: { awb, ...(after === undefined ? {} : { seq: { gt: after } }) },
        orderBy: [{ occurredAt: "asc" }, { seq: "asc" }],
        take: 1_000,
      });
    },
  };
}

export type MilestoneService = ReturnType<typeof createMilestoneService>;
