/** JSON schemas of /healthz and /readyz. */
import { objectSchema, ref } from "../http/schema";
import type { HealthReport } from "./health.service";

export const liveness = objectSchema<{ status: "ok" }>({
  description: "The process is up",
  properties: { status: { type: "string", enum: ["ok"] } },
});

export const healthReportSchema = objectSchema<HealthReport>({
  $id: "HealthReport",
  properties: {
    status: { type: "string", enum: ["ready", "unavailable"] },
    database: { type: "string", enum: ["up", "down"] },
    databaseKind: { type: "string", enum: ["postgres", "pglite"] },
    migrationsApplied: { type: "boolean" },
    redis: {
      type: "string",
      enum: ["up", "down", "not used"],
      description: "The live fan-out's Redis; down degrades live events to this instance, which stays ready",
    },
    broker: {
      type: "string",
      enum: ["consuming", "reconnecting", "not used"],
      description:
        "The RabbitMQ consumer of carrier messages (AMQP_URL); reconnecting leaves the instance ready (messages wait in the queue)",
    },
  },
});

/** /readyz's 503: a SERVICE_UNAVAILABLE problem whose `checks` is the report. */
export const notReady = {
  allOf: [ref("Problem"), { type: "object", required: ["checks"], properties: { checks: ref("HealthReport") } }],
} as const;
