import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { DeliveryKind, DeliveryStore } from "./delivery.store";

export type DeliveryOutcome = "delivered" | "retry" | "dead" | "gone";

/** The `kind` label: what a delivery carries. */
const KIND_LABEL: Record<DeliveryKind, string> = { WEBHOOK: "webhook", ONE_RECORD: "onerecord" };

/** Prometheus metrics of the outbox, on a registry of their own (one per app, so tests do not share). */
export function createDeliveryMetrics(store: DeliveryStore) {
  const registry = new Registry();
  const deliveries = new Counter({
    name: "gateway_deliveries_total",
    help: "Delivery attempts by what they led to, and what they carried (a webhook, a ONE Record notification)",
    labelNames: ["outcome", "kind"],
    registers: [registry],
  });
  const attempts = new Counter({
    name: "gateway_delivery_attempts_total",
    help: "Notification attempts made (a POST, or one refused before it: a forbidden callback address)",
    registers: [registry],
  });
  const latency = new Histogram({
    name: "gateway_event_to_delivery_seconds",
    help: "From the event's receipt to its successful delivery",
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400],
    registers: [registry],
  });
  const events = new Counter({
    name: "gateway_events_ingested_total",
    help: "Milestones stored (duplicates excluded)",
    registers: [registry],
  });
  // Both queue gauges come from one query per scrape (prom-client collects them one after the other).
  let stats: { at: number; value: ReturnType<DeliveryStore["queueStats"]> } | undefined;
  const queueStats = () => {
    if (!stats || Date.now() - stats.at > 250) stats = { at: Date.now(), value: store.queueStats() };
    return stats.value;
  };
  new Gauge({
    name: "gateway_delivery_queue_depth",
    help: "Deliveries pending (due or waiting for a retry)",
    registers: [registry],
    async collect() {
      this.set((await queueStats()).pending);
    },
  });
  new Gauge({
    name: "gateway_delivery_oldest_due_age_seconds",
    help: "How long the oldest due delivery has been waiting",
    registers: [registry],
    async collect() {
      this.set((await queueStats()).oldestDueAgeSeconds);
    },
  });
  const circuitsOpen = new Gauge({
    name: "gateway_delivery_circuits_open",
    help: "Callback origins this worker sends nothing to now: their circuit is open after consecutive failures",
    registers: [registry],
  });
  const circuitChanges = new Counter({
    name: "gateway_delivery_circuit_changes_total",
    help: "Origin circuits opened (after consecutive failures, or a failed probe) and closed (a probe succeeded)",
    labelNames: ["change"],
    registers: [registry],
  });
  const disabled = new Counter({
    name: "gateway_subscriptions_disabled_total",
    help: "Subscriptions disabled because every delivery attempt failed for DELIVERY_DISABLE_AFTER_HOURS, by kind",
    labelNames: ["kind"],
    registers: [registry],
  });
  const tokenRequests = new Counter({
    name: "gateway_onerecord_token_requests_total",
    help: "Access tokens asked of ONE_RECORD_TOKEN_URL for ONE Record notifications, by outcome",
    labelNames: ["outcome"],
    registers: [registry],
  });
  return {
    registry,
    recordCircuit(change: "opened" | "closed", openCount: number) {
      circuitChanges.inc({ change });
      circuitsOpen.set(openCount);
    },
    recordDisabled(kind: DeliveryKind, count: number) {
      disabled.inc({ kind: KIND_LABEL[kind] }, count);
    },
    recordTokenRequest(outcome: "ok" | "failed") {
      tokenRequests.inc({ outcome });
    },
    recordAttempt(outcome: DeliveryOutcome, kind: DeliveryKind, eventReceivedAt: Date) {
      attempts.inc();
      deliveries.inc({ outcome, kind: KIND_LABEL[kind] });
      if (outcome === "delivered") latency.observe((Date.now() - eventReceivedAt.getTime()) / 1000);
    },
    recordEvents(count: number) {
      events.inc(count);
    },
  };
}

export type DeliveryMetrics = ReturnType<typeof createDeliveryMetrics>;
