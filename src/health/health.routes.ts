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
  });
}
