import { Counter, Gauge, type Registry } from "prom-client";
import type { RetentionKind } from "../domain/retention";

/** Retention's metrics, on the app's registry (the one /metrics serves). */
export function createRetentionMetrics(
  registry: Registry,
  tableSizes: () => Promise<Array<{ table: string; bytes: number; rows: number }>>,
) {
  // Both gauges from one query per scrape (prom-client collects them one after the other).
  let sizes: { at: number; value: ReturnType<typeof tableSizes> } | undefined;
  const measured = () => {
    if (!sizes || Date.now() - sizes.at > 1_000) sizes = { at: Date.now(), value: tableSizes().catch(() => []) };
    return sizes.value;
  };
  new Gauge({
    name: "gateway_table_bytes",
    help: "Size of each table on disk, its indexes included",
    labelNames: ["table"],
    registers: [registry],
    async collect() {
      for (const { table, bytes } of await measured()) this.set({ table }, bytes);
    },
  });
  new Gauge({
    name: "gateway_table_rows_estimate",
    help: "Each table's row count as the planner estimates it (kept fresh by (auto)vacuum and analyze)",
    labelNames: ["table"],
    registers: [registry],
    async collect() {
      for (const { table, rows } of await measured()) this.set({ table }, rows);
    },
  });
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
    help: "Pending deliveries of expired or long-disabled subscriptions marked dead (never sent)",
    registers: [registry],
  });
  return {
    expired: (rows: number) => expired.inc(rows),
    deleted: (kind: RetentionKind, rows: number) => deleted.inc({ kind }, rows),
    run: (outcome: "done" | "failed") => runs.inc({ outcome }),
  };
}

export type RetentionMetrics = ReturnType<typeof createRetentionMetrics>;
