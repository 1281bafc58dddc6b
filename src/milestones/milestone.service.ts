import type { Prisma } from "../db/database";
import { parseAwb } from "../domain/awb";
import { matchesState } from "../domain/status";
import { validationError } from "../errors";
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
          // One multi-row statement per table: Prisma's createMany path cost ~10x raw SQL for 500 rows.
          const created = await tx.$queryRawUnsafe<Array<StoredMilestone & { dedupeKey: string }>>(
            `INSERT INTO status_event (id, dedupe_key, awb, state, occurred_at, received_at, toa_timestamp, station, flight)
             SELECT gen_random_uuid(), k, a, s, o::timestamptz, $5::timestamptz, t::timestamptz, st, f
             FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $6::text[], $7::text[], $8::text[]) AS v(k, a, s, o, t, st, f)
             ON CONFLICT (dedupe_key) DO NOTHING
             RETURNING id::text AS id, seq, dedupe_key AS "dedupeKey", awb, state, occurred_at AS "occurredAt", received_at AS "receivedAt",
                       toa_timestamp AS "toaTimestamp", station, flight`,
            keys,
            events.map((e) => e.awb),
            events.map((e) => e.state),
            events.map((e) => e.occurredAt.toISOString()),
            receivedAt.toISOString(),
            events.map((e) => e.toaTimestamp?.toISOString() ?? null),
            events.map((e) => e.station),
            events.map((e) => e.flight),
          );
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
            const chunk = deliveries.slice(i, i + INSERT_CHUNK);
            await tx.$executeRawUnsafe(
              `INSERT INTO delivery (id, event_id, subscription_id, client_id, callback, origin, payload)
               SELECT gen_random_uuid(), e::uuid, s::uuid, c::uuid, cb, o, p FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS v(e, s, c, cb, o, p)`,
              chunk.map((d) => d.eventId),
              chunk.map((d) => d.subscriptionId),
              chunk.map((d) => d.clientId),
              chunk.map((d) => d.callback),
              chunk.map((d) => d.origin),
              chunk.map((d) => d.payload),
            );
          }
          return { results, stored: created.map(({ dedupeKey: _, ...event }) => event), deliveryCount: deliveries.length };
        },
        { timeout: 60_000, maxWait: 10_000 },
      );
      if (stored.length > 0) onCommitted(stored, deliveryCount);
      return results;
    },

    /** Milestones of these AWBs stored after `sequence`, in storage order (live catch-up). */
    async since(awbs: readonly string[], sequence: bigint, limit = 1_000): Promise<StoredMilestone[]> {
      return prisma.statusEvent.findMany({ where: { awb: { in: [...awbs] }, seq: { gt: sequence } }, orderBy: { seq: "asc" }, take: limit });
    },

    /** The stored milestones of an AWB (any accepted spelling), in the order they happened; at most 1,000. */
    async history(awbInput: unknown): Promise<StoredMilestone[]> {
      const parsed = typeof awbInput === "string" ? parseAwb(awbInput) : null;
      if (!parsed) throw validationError([{ field: "awb", message: "is required: an AWB such as 020-12345675" }]);
      return prisma.statusEvent.findMany({
        where: { awb: parsed.canonical },
        orderBy: [{ occurredAt: "asc" }, { seq: "asc" }],
        take: 1_000,
      });
    },
  };
}

export type MilestoneService = ReturnType<typeof createMilestoneService>;
