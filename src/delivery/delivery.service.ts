import type { Principal } from "../clients/principal";
import type { Prisma } from "../db/database";
import { clientEventIdOf } from "../domain/event-id";
import { checkSubscriptionId, UUID_PATTERN } from "../domain/ids";
import { AppError, validationError } from "../errors";
import { requeueDead, requeueDelivery } from "./sql/requeue.sql";

export interface DeliveryAttemptView {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

export interface DeliveryView {
  deliveryId: string;
  subscriptionId: string | null;
  eventId: string;
  /** The eventId the ingesting caller gave, or null. */
  clientEventId: string | null;
  callback: string;
  /** PARKED: its subscription is disabled; PENDING again, due at once, when its owner enables it. */
  status: "PENDING" | "DELIVERED" | "DEAD" | "PARKED";
  attemptCount: number;
  /** When the next attempt is due: PENDING only (null for a parked one, which waits for the enable). */
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  completedAt: Date | null;
  payload: string;
  attempts: DeliveryAttemptView[];
}

const STATUSES = ["PENDING", "DELIVERED", "DEAD", "PARKED"] as const;

function parseInstant(value: unknown, field: string): Date | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const date = typeof value === "string" || value instanceof Date ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw validationError([{ field, message: "must be an ISO 8601 date-time" }]);
  return date;
}

/** Reading and redelivering a client's own deliveries (CONTRACT §7: dead ones can be redelivered). */
export function createDeliveryService({ prisma, onRequeued }: { prisma: Prisma; onRequeued: () => void }) {
  const toView = (
    d: Awaited<
      ReturnType<
        typeof prisma.delivery.findMany<{ include: { attempts: true; event: { select: { dedupeKey: true } } } }>
      >
    >[number],
  ): DeliveryView => ({
    deliveryId: d.id,
    subscriptionId: d.subscriptionId,
    // A legacy subscription's deliveries are webhooks: each notifies of a stored milestone.
    eventId: d.eventId!,
    clientEventId: clientEventIdOf(d.event!.dedupeKey),
    callback: d.callback,
    status: d.status,
    attemptCount: d.attemptCount,
    nextAttemptAt: d.status === "PENDING" ? d.nextAttemptAt : null,
    lastError: d.lastError,
    createdAt: d.createdAt,
    completedAt: d.completedAt,
    payload: d.payload,
    attempts: d.attempts.map((a) => ({
      startedAt: a.startedAt,
      durationMs: a.durationMs,
      statusCode: a.statusCode,
      error: a.error,
    })),
  });

  async function ownSubscription(principal: Principal, subscriptionId: unknown): Promise<string> {
    const checked = checkSubscriptionId(subscriptionId);
    if ("problem" in checked) throw validationError([checked.problem]);
    const { id } = checked;
    const subscription = await prisma.subscription.findUnique({ where: { id }, select: { clientId: true } });
    if (!subscription || subscription.clientId !== principal.clientId)
      throw new AppError("SUBSCRIPTION_NOT_FOUND", `No subscription ${id}`);
    return id;
  }

  return {
    /** A subscription's deliveries, newest first, with every attempt. */
    async listForSubscription(
      principal: Principal,
      subscriptionId: unknown,
      { status, first = 50 }: { status?: unknown; first?: number } = {},
    ): Promise<DeliveryView[]> {
      const id = await ownSubscription(principal, subscriptionId);
      if (status !== undefined && status !== null && !(STATUSES as readonly unknown[]).includes(status)) {
        throw validationError([{ field: "status", message: `must be one of ${STATUSES.join(", ")}` }]);
      }
      if (!Number.isInteger(first) || first < 1 || first > 500)
        throw validationError([{ field: "first", message: "must be a whole number from 1 to 500" }]);
      const rows = await prisma.delivery.findMany({
        where: {
          subscriptionId: id,
          clientId: principal.clientId,
          ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: first,
        include: { attempts: { orderBy: { startedAt: "asc" } }, event: { select: { dedupeKey: true } } },
      });
      return rows.map(toView);
    },

    /**
     * Sends a dead or delivered notification again (same webhook-id), from a fresh attempt schedule
     * (parked while its subscription is disabled). A pending or parked one is answered as it is.
     */
    async redeliver(principal: Principal, deliveryId: unknown): Promise<DeliveryView> {
      if (typeof deliveryId !== "string" || !UUID_PATTERN.test(deliveryId))
        throw validationError([{ field: "deliveryId", message: "must be a delivery id (a UUID)" }]);
      const row = await prisma.delivery.findUnique({ where: { id: deliveryId.toLowerCase() } });
      if (!row || row.clientId !== principal.clientId)
        throw new AppError("DELIVERY_NOT_FOUND", `No delivery ${deliveryId}`);
      if (row.status === "DEAD" || row.status === "DELIVERED") {
        if ((await requeueDelivery.affectedRows(prisma, { id: row.id })) > 0) onRequeued();
      }
      const updated = await prisma.delivery.findUniqueOrThrow({
        where: { id: row.id },
        include: { attempts: { orderBy: { startedAt: "asc" } }, event: { select: { dedupeKey: true } } },
      });
      return toView(updated);
    },

    /** Requeues every dead delivery of a subscription, optionally only those created in [from, to) (parked while it is disabled). */
    async redeliverDead(
      principal: Principal,
      subscriptionId: unknown,
      window: { from?: unknown; to?: unknown } = {},
    ): Promise<number> {
      const id = await ownSubscription(principal, subscriptionId);
      const from = parseInstant(window.from, "from");
      const to = parseInstant(window.to, "to");
      const count = await requeueDead.affectedRows(prisma, {
        subscriptionId: id,
        clientId: principal.clientId,
        from: from?.toISOString() ?? null,
        to: to?.toISOString() ?? null,
      });
      if (count > 0) onRequeued();
      return count;
    },
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;
