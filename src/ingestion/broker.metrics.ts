import { Counter, Gauge, type Registry } from "prom-client";

/**
 * What became of a broker message: "stored" (committed, at least one milestone new), "duplicate"
 * (committed, every milestone stored before: a redelivery or a message sent again), "unmapped" (holding
 * no gateway milestone: its statuses recorded in the history, committed), "dead_lettered" (unreadable:
 * moved to the dead-letter queue), "failed" (its ingestion failed: handed back to the queue, counted
 * at each attempt).
 */
export type BrokerOutcome = "stored" | "duplicate" | "unmapped" | "dead_lettered" | "failed";

/** The broker consumer's metrics, on the app's registry (the one /metrics serves). */
export function createBrokerMetrics(registry: Registry) {
  const messages = new Counter({
    name: "gateway_broker_messages_total",
    help: "Broker messages by what became of them",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const consuming = new Gauge({
    name: "gateway_broker_consuming",
    help: "1 while this instance consumes the queue, 0 while it (re)connects",
    registers: [registry],
  });
  const connections = new Counter({
    name: "gateway_broker_connections_total",
    help: "Connections to the broker that reached consuming (more than one: reconnections)",
    registers: [registry],
  });
  consuming.set(0);
  return {
    record(outcome: BrokerOutcome, count = 1) {
      messages.inc({ outcome }, count);
    },
    consuming(yes: boolean) {
      consuming.set(yes ? 1 : 0);
      if (yes) connections.inc();
    },
  };
}

export type BrokerMetrics = ReturnType<typeof createBrokerMetrics>;
