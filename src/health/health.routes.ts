import type { FastifyInstance } from "fastify";
import type { Registry } from "prom-client";
import { AppError } from "../errors";
import { sendProblem } from "../http/problem";
import { addSchemas, ALWAYS, problems, ref } from "../http/schema";
import { healthReportSchema, liveness, notReady } from "./health.schemas";
import type { HealthService } from "./health.service";

const tags: readonly string[] = ["health"];

export function registerHealthRoutes(app: FastifyInstance, health: HealthService): void {
  addSchemas(app, healthReportSchema);

  // Liveness: the process is up and its event loop turns. Never touches a dependency.
  app.get(
    "/healthz",
    {
      schema: {
        tags,
        operationId: "getLiveness",
        summary: "Liveness",
        response: { 200: liveness, ...problems(ALWAYS) },
      },
      config: { auth: "public" },
    },
    async () => ({ status: "ok" }) as const,
  );

  app.get(
    "/readyz",
    {
      schema: {
        tags,
        operationId: "getReadiness",
        summary: "Readiness: the database answers and every migration is applied",
        response: {
          200: { description: "Ready", ...ref("HealthReport") },
          503: {
            description: "Not ready (SERVICE_UNAVAILABLE); `checks` says what is not",
            headers: { "retry-after": { type: "integer", description: "Seconds to wait before retrying" } },
            content: { "application/problem+json": { schema: notReady } },
          },
          ...problems(ALWAYS),
        },
      },
      config: { auth: "public" },
    },
    async (_request, reply) => {
      const report = await health.readiness();
      if (report.status === "ready") return report;
      return sendProblem(
        reply,
        new AppError(
          "SERVICE_UNAVAILABLE",
          report.database === "down"
            ? "Not ready: the database does not answer"
            : "Not ready: database migrations are pending",
          {
            extensions: { checks: report },
            retryAfterSeconds: 5,
          },
        ),
      );
    },
  );
}

/** GET /metrics: Prometheus text of this process (deliveries, queue, live fan-out). Not in the API docs. */
export function registerMetricsRoute(app: FastifyInstance, registry: Registry): void {
  app.get("/metrics", { schema: { hide: true }, config: { auth: "public" } }, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
