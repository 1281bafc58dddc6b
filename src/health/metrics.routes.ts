import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";

/** GET /metrics: Prometheus text of this process (deliveries, queue, live fan-out). Not in the API docs. */
export function registerMetricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
