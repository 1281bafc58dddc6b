import { randomUUID } from "node:crypto";
import type { Prisma } from "../../db/database";
import { type NewDelivery, queueDeliveries } from "../../delivery/delivery.store";
import { originOf } from "../../delivery/notification";
import { activeTraceParent } from "../../tracing/spans";
import { type NotificationContent, notificationBody } from "./notification-body";

/** Who a notification goes to (docs/ONE-RECORD.md "What is notified"). */
export interface NotificationRecipient {
  /** Where it is POSTed: the subscriber's (or partner's, or requester's) `{server}/notifications`. */
  readonly endpoint: string;
  /** The recipient's API client when it is one: that client's delivery log shows it. Null otherwise. */
  readonly clientId: string | null;
  /**
   * The ONE Record subscription it is sent under (onerecord_subscription.id), whose status, expiry,
   * auto-disable and revocation govern it. Null for what no subscription governs: a partner's
   * LOGISTICS_OBJECT_AVAILABLE, and an action request's status change (a SUBSCRIPTION_REQUEST_REVOKED
   * must go even though the subscription it tells of no longer takes notifications).
   */
  readonly subscriptionId: string | null;
}

export interface OneRecordNotification {
  readonly to: NotificationRecipient;
  readonly content: NotificationContent;
  /**
   * The milestone it tells of (status_event.id), for LOGISTICS_EVENT_RECEIVED of a milestone: the
   * outbox holds at most one notification per milestone and subscription (a unique index), so a
   * second queuing of the same pair fails the transaction. Null (the default) otherwise.
   */
  readonly milestoneId?: string | null | undefined;
}

/** The caller's transaction (Prisma's interactive transaction client). */
type Tx = Pick<Prisma, "$queryRawUnsafe">;

/**
 * The outbox row of one notification: kind ONE_RECORD, its id the notification id (sent as
 * `Notification-Id`, the same on every retry), its payload the api:Notification fixed now.
 * `leased`: queued already claimed by this process's worker (the milestone hand-off).
 */
export function oneRecordDelivery(notification: OneRecordNotification, leased = false): NewDelivery {
  const { to } = notification;
  return {
    id: randomUUID(),
    kind: "ONE_RECORD",
    leased,
    eventId: notification.milestoneId ?? null,
    subscriptionId: null,
    oneRecordSubscriptionId: to.subscriptionId,
    clientId: to.clientId,
    callback: to.endpoint,
    origin: originOf(to.endpoint),
    payload: notificationBody(notification.content),
  };
}

/**
 * Queues ONE Record notifications in the caller's transaction (`tx`: what triggers them is written
 * in the same one, so a committed change never lacks its notifications and a rolled-back one sends
 * none). They go out through the outbox like webhooks: any worker claims them, workers of other
 * processes are woken at commit. Answers the queued deliveries' ids (the notification ids), in the
 * order given. `traceParent`: the trace the sends continue (default: the active one, if tracing).
 */
export async function queueOneRecordNotifications(
  tx: Tx,
  notifications: readonly OneRecordNotification[],
  { traceParent = activeTraceParent() ?? null }: { traceParent?: string | null } = {},
): Promise<string[]> {
  if (notifications.length === 0) return [];
  const deliveries = notifications.map((n) => oneRecordDelivery(n));
  await queueDeliveries(tx, deliveries, { token: randomUUID(), ms: 0 }, traceParent);
  return deliveries.map((d) => d.id);
}
