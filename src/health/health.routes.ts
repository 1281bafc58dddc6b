import type { FastifyInstance } from "fastify";
import { AppError } from "../errors";
import { sendProblem } from "../http/problem";
import type { HealthService } from "./health.service";

export function registerHealthRoutes(app: FastifyInstance, health: HealthService): void {
  // Liveness: the process is up and its event loop turns. Never touches a dependency.
  app.get("/healthz", async () => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply) => {
    const report = await health.readiness();
    if (report.status === "ready") return report;
    return sendProblem(
      reply,
      new AppError("SERVICE_UNAVAILABLE", `Not ready: database ${report.database}, migrations ${report.migrationsApplied ? "applied" : "pending"}`, {
        extensions: { checks: report },
        retryAfterSeconds: 5,
      }),
    );
  });
}
