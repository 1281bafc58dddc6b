import { Counter, type Registry } from "prom-client";
import type { RetentionKind } from "../domain/retention";

/** Retention's metrics, on the app's registry (the one /metrics serves). */
export function createRetentionMetrics(registry: Registry) {
  const deleted = new Counter({
    name: "gateway_retention_deleted_total",
    help: "Rows retention deleted, by kind (deliveries' attempts go with them and are not counted)",
    labelNames: ["kind"],
    registers: [registry],
  });
  const runs = new Counter({
    name: "gateway_retention_runs_total",
    help: "Retention runs by outcome",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const expired = new Counter({
    name: "gateway_retention_expired_deliveries_total",
    help: "Pending deliveries of expired subscriptions marked dead (never sent)",
    registers: [registry],
  });
  return {
    expired: (rows: number) => expired.inc(rows),
    deleted: (kind: RetentionKind, rows: number) => deleted.inc({ kind }, rows),
    run: (outcome: "done" | "failed") => runs.inc({ outcome }),
  };
}

export type RetentionMetrics = ReturnType<typeof createRetentionMetrics>;
