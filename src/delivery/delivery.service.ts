import type { Principal } from "../clients/principal";
import type { Prisma, SqlExecutor } from "../db/database";
import { clientEventIdOf } from "../domain/event-id";
import { checkSubscriptionId, UUID_PATTERN } from "../domain/ids";
import { AppError, validationError } from "../errors";
import { enableOneRecordSubscription } from "./sql/enable-onerecord-subscription.sql";
import { requeueDead, requeueDeadOneRecord, requeueDelivery } from "./sql/requeue.sql";

export interface DeliveryAttemptView {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

/** What every outbox row shows, a webhook's or a ONE Record notification's: its state and attempts. */
export interface OutboxStateView {
  /** PARKED: its subscription is disabled; PENDING again, due at once, when it is enabled. */
  status: "PENDING" | "DELIVERED" | "DEAD" | "PARKED";
  attemptCount: number;
  /** When the next attempt is due: PENDING only (null for a parked one, which waits for the enable). */
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  completedAt: Date | null;
  /** The body sent (a webhook's JSON, an api:Notification's JSON-LD). */
  payload: string;
  attempts: DeliveryAttemptView[];
}

export interface DeliveryView extends OutboxStateView {
  deliveryId: string;
  subscriptionId: string | null;
  eventId: string;
  /** The eventId the ingesting caller gave, or null. */
  clientEventId: string | null;
  callback: string;
}

/** A ONE Record notification in the outbox, for operators (admin): one api:Notification to one endpoint. */
export interface OneRecordDeliveryView extends OutboxStateView {
  /** Also the Notification-Id header of every attempt. */
  deliveryId: string;
  /** The SubscriptionRequest it notifies (its action request id); null for announcements and request-status notifications. */
  subscriptionRequestId: string | null;
  /** The milestone it notifies of, when it is one. */
  eventId: string | null;
  /** The subscriber's notifications endpoint. */
  endpoint: string;
}

const STATUSES = ["PENDING", "DELIVERED", "DEAD", "PARKED"] as const;

function checkListing(status: unknown, first: number): void {
  if (status !== undefined && status !== null && !(STATUSES as readonly unknown[]).includes(status))
    throw validationError([{ field: "status", message: `must be one of ${STATUSES.join(", ")}` }]);
  if (!Number.isInteger(first) || first < 1 || first > 500)
    throw validationError([{ field: "first", message: "must be a whole number from 1 to 500" }]);
}

function checkDeliveryId(deliveryId: unknown): string {
  if (typeof deliveryId !== "string" || !UUID_PATTERN.test(deliveryId))
    throw validationError([{ field: "deliveryId", message: "must be a delivery id (a UUID)" }]);
  return deliveryId.toLowerCase();
}

const attemptViews = (attempts: DeliveryAttemptView[]): DeliveryAttemptView[] =>
  attempts.map((a) => ({ startedAt: a.startedAt, durationMs: a.durationMs, statusCode: a.statusCode, error: a.error }));

function parseInstant(value: unknown, field: string): Date | undefined {
  if (value === undefined || value === null || value === "") return undefined;
  const date = typeof value === "string" || value instanceof Date ? new Date(value) : new Date(NaN);
  if (Number.isNaN(date.getTime())) throw validationError([{ field, message: "must be an ISO 8601 date-time" }]);
  return date;
}

/**
 * Reading and redelivering a client's own webhook deliveries (CONTRACT §7: dead ones can be
 * redelivered); and, for operators (`oneRecord`), the ONE Record notifications in the outbox.
 */
export function createDeliveryService({
  prisma,
  sql,
  onRequeued,
}: {
  prisma: Prisma;
  /** Runs the enable script (one round trip, one transaction). */
  sql: Pick<SqlExecutor, "script">;
  onRequeued: () => void;
}) {
  type Row = Awaited<
    ReturnType<typeof prisma.delivery.findMany<{ include: { attempts: true; event: { select: { dedupeKey: true } } } }>>
  >[number];

  const stateOf = (d: Row): OutboxStateView => ({
    status: d.status,
    attemptCount: d.attemptCount,
    nextAttemptAt: d.status === "PENDING" ? d.nextAttemptAt : null,
    lastError: d.lastError,
    createdAt: d.createdAt,
    completedAt: d.completedAt,
    payload: d.payload,
    attempts: attemptViews(d.attempts),
  });

  const toView = (d: Row): DeliveryView => {
    // Only webhooks are read here (`kind` is filtered on), and each notifies of a stored milestone.
    if (d.eventId === null || d.event === null) throw new Error(`delivery ${d.id} is no webhook of a milestone`);
    return {
      deliveryId: d.id,
      subscriptionId: d.subscriptionId,
      eventId: d.eventId,
      clientEventId: clientEventIdOf(d.event.dedupeKey),
      callback: d.callback,
      ...stateOf(d),
    };
  };

  const oneRecordView = (d: Row): OneRecordDeliveryView => ({
    deliveryId: d.id,
    subscriptionRequestId: d.oneRecordSubscriptionId,
    eventId: d.eventId,
    endpoint: d.callback,
    ...stateOf(d),
  });
  const withAttempts = {
    attempts: { orderBy: { startedAt: "asc" } },
    event: { select: { dedupeKey: true } },
  } as const;

  async function oneRecordSubscription(subscriptionRequestId: unknown): Promise<string> {
    if (typeof subscriptionRequestId !== "string" || !UUID_PATTERN.test(subscriptionRequestId))
      throw validationError([
        { field: "subscriptionRequestId", message: "must be a subscription request id (a UUID)" },
      ]);
    const id = subscriptionRequestId.toLowerCase();
    const found = await prisma.oneRecordSubscription.findUnique({ where: { id }, select: { id: true } });
    if (!found) throw new AppError("ACTION_REQUEST_NOT_FOUND", `No subscription request ${id}`);
    return id;
  }

  async function oneRecordDelivery(deliveryId: unknown) {
    const id = checkDeliveryId(deliveryId);
    const row = await prisma.delivery.findUnique({ where: { id }, include: withAttempts });
    if (!row || row.kind !== "ONE_RECORD") throw new AppError("DELIVERY_NOT_FOUND", `No ONE Record delivery ${id}`);
    return row;
  }

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
      checkListing(status, first);
      const rows = await prisma.delivery.findMany({
        where: {
          subscriptionId: id,
          clientId: principal.clientId,
          kind: "WEBHOOK",
          ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
        },
        orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        take: first,
        include: withAttempts,
      });
      return rows.map(toView);
    },

    /**
     * Sends a dead or delivered notification again (same webhook-id), from a fresh attempt schedule
     * (parked while its subscription is disabled). A pending or parked one is answered as it is.
     */
    async redeliver(principal: Principal, deliveryId: unknown): Promise<DeliveryView> {
      const id = checkDeliveryId(deliveryId);
      const row = await prisma.delivery.findUnique({ where: { id } });
      // A ONE Record notification is not in a client's webhook log, even when the subscriber is a client.
      if (!row || row.clientId !== principal.clientId || row.kind !== "WEBHOOK")
        throw new AppError("DELIVERY_NOT_FOUND", `No delivery ${String(deliveryId)}`);
      if (row.status === "DEAD" || row.status === "DELIVERED") {
        if ((await requeueDelivery.affectedRows(prisma, { id: row.id })) > 0) onRequeued();
      }
      return toView(await prisma.delivery.findUniqueOrThrow({ where: { id: row.id }, include: withAttempts }));
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

    /** For operators (admin): the ONE Record notifications in the outbox (docs/ONE-RECORD.md "Delivery of notifications"). */
    oneRecord: {
      /** Newest first, with every attempt: one SubscriptionRequest's, or (none named) every ONE Record notification. */
      async list(
        subscriptionRequestId: unknown,
        { status, first = 50 }: { status?: unknown; first?: number } = {},
      ): Promise<OneRecordDeliveryView[]> {
        const id =
          subscriptionRequestId === undefined || subscriptionRequestId === null
            ? undefined
            : await oneRecordSubscription(subscriptionRequestId);
        checkListing(status, first);
        const rows = await prisma.delivery.findMany({
          where: {
            kind: "ONE_RECORD",
            ...(id ? { oneRecordSubscriptionId: id } : {}),
            ...(status ? { status: status as (typeof STATUSES)[number] } : {}),
          },
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
          take: first,
          include: withAttempts,
        });
        return rows.map(oneRecordView);
      },

      /**
       * Sends a dead or delivered notification again (same Notification-Id and body) from a fresh
       * schedule, parked while its subscription is disabled; one whose subscription is no longer
       * accepted or has expired is answered as it is (nothing would send it).
       */
      async redeliver(deliveryId: unknown): Promise<OneRecordDeliveryView> {
        const row = await oneRecordDelivery(deliveryId);
        if (row.status === "DEAD" || row.status === "DELIVERED") {
          if ((await requeueDelivery.affectedRows(prisma, { id: row.id })) > 0) onRequeued();
        }
        return oneRecordView(await prisma.delivery.findUniqueOrThrow({ where: { id: row.id }, include: withAttempts }));
      },

      /** Requeues a SubscriptionRequest's dead notifications, optionally created in [from, to); answers how many. */
      async redeliverDead(
        subscriptionRequestId: unknown,
        window: { from?: unknown; to?: unknown } = {},
      ): Promise<number> {
        const id = await oneRecordSubscription(subscriptionRequestId);
        const from = parseInstant(window.from, "from");
        const to = parseInstant(window.to, "to");
        const count = await requeueDeadOneRecord.affectedRows(prisma, {
          subscriptionId: id,
          from: from?.toISOString() ?? null,
          to: to?.toISOString() ?? null,
        });
        if (count > 0) onRequeued();
        return count;
      },

      /**
       * Enables a ONE Record subscription that delivery disabled (its notifications kept failing):
       * its failing clock starts afresh and its parked notifications are due at once. Answers whether
       * it was disabled.
       */
      async enable(subscriptionRequestId: unknown): Promise<boolean> {
        const id = await oneRecordSubscription(subscriptionRequestId);
        const [, updated] = await enableOneRecordSubscription.run(sql, { id });
        const wasDisabled = (updated?.[0] as { was_disabled?: boolean } | undefined)?.was_disabled === true;
        if (wasDisabled) onRequeued();
        return wasDisabled;
      },
    },
  };
}

export type DeliveryService = ReturnType<typeof createDeliveryService>;
