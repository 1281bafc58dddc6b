import { Counter, Gauge, type Registry } from "prom-client";
import { LIMIT_NAMES, type SharedLimitStore } from "./shared-limits";

/**
 * Where the per-key and per-address limits are counted right now, and how often this instance had to
 * decide one alone while REDIS_URL is set: a "memory" line at 1 with REDIS_URL set means each
 * instance grants a key its whole budget (N instances: N times it).
 */
export function registerLimitMetrics(registry: Registry, store: SharedLimitStore | undefined): void {
  new Gauge({
    name: "gateway_rate_limit_store",
    help: 'Where rate limits, failed-authentication budgets and websocket caps are counted: 1 on the store in use ("redis": shared by every instance, "memory": this instance alone)',
    labelNames: ["store"],
    registers: [registry],
    collect() {
      const shared = store?.shared() ?? false;
      this.set({ store: "redis" }, shared ? 1 : 0);
      this.set({ store: "memory" }, shared ? 0 : 1);
    },
  });
  new Counter({
    name: "gateway_rate_limit_fallbacks_total",
    help: "Limit decisions this instance made alone although REDIS_URL is set (Redis down, failing or slower than LIMITS_REDIS_TIMEOUT_MS)",
    labelNames: ["limit"],
    registers: [registry],
    collect() {
      this.reset();
      const counts = store?.fallbacks();
      for (const limit of LIMIT_NAMES) this.inc({ limit }, counts?.[limit] ?? 0);
    },
  });
}
