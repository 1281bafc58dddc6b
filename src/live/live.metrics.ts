import { Counter, Gauge, type Registry } from "prom-client";

/** Gauges of the live fan-out: a leak of sockets or subscriptions shows as a line that only climbs. */
export function registerLiveMetrics(
  registry: Registry,
  read: { sockets: () => number; subscriptions: () => number; streams: () => number; executions: () => number },
): void {
  new Gauge({
    name: "gateway_live_sockets",
    help: "Open GraphQL websockets",
    registers: [registry],
    collect() {
      this.set(read.sockets());
    },
  });
  new Gauge({
    name: "gateway_live_subscriptions",
    help: "Live milestone subscriptions running (awbStatusChanged, statusEvents)",
    registers: [registry],
    collect() {
      this.set(read.subscriptions());
    },
  });
  new Gauge({
    name: "gateway_live_awb_streams",
    help: "AWBs with at least one live subscriber on this instance",
    registers: [registry],
    collect() {
      this.set(read.streams());
    },
  });
  new Counter({
    name: "gateway_live_executions_total",
    help: "GraphQL executions of live events: one per (event, operation), shared by every subscriber that asked the same",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read.executions());
    },
  });
}
