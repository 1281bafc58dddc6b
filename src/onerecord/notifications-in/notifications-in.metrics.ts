import { Counter, type Registry } from "prom-client";

/** What POST {base}/notifications counts, on the app's registry (the one /metrics serves). */
export function createNotificationsInMetrics(registry: Registry) {
  const received = new Counter({
    name: "gateway_onerecord_notifications_received_total",
    help: "ONE Record notifications other servers POSTed to this one and it stored, by event type (a repeated Notification-Id is not counted)",
    labelNames: ["event_type"],
    registers: [registry],
  });
  // The label's values are the members of a closed enumeration (api:NotificationEventType): bounded.
  return { received: (eventType: string) => received.inc({ event_type: eventType }) };
}
