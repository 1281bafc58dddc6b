import type { Database } from "../db/database";

export interface HealthReport {
  status: "ready" | "unavailable";
  database: "up" | "down";
  databaseKind: "postgres" | "pglite";
  migrationsApplied: boolean;
  /**
   * The live fan-out's Redis: "down" degrades live events to this instance (it stays ready: callbacks,
   * REST and GraphQL do not need Redis); "not used" without REDIS_URL.
   */
  redis: "up" | "down" | "not used";
  /**
   * The RabbitMQ consumer: "reconnecting" (also before its first connection) leaves the instance ready
   * (REST, GraphQL and callbacks do not need the broker; messages wait in the queue, or another
   * instance consumes them); "not used" without AMQP_URL.
   */
  broker: "consuming" | "reconnecting" | "not used";
}

/**
 * What readiness needs of the live fan-out (live/live-events.ts provides it). Declared here, so the
 * service does not depend on the websocket transport.
 */
export interface LiveFanOutStatus {
  /** "up"/"down" with REDIS_URL (down: fanning out within this instance only), else "not used". */
  redisStatus(): "up" | "down" | "not used";
}

/** What readiness needs of the broker consumer (ingestion/broker-consumer.ts provides it). */
export type BrokerConsumerStatus = () => "consuming" | "reconnecting" | "not used";

/**
 * Readiness: the database answers and every migration is recorded as applied. Callers that ask while
 * a probe of the database runs share its answer (never an older one): however many ask at once, the
 * database is asked once.
 */
export function createHealthService(
  database: Database,
  live: LiveFanOutStatus,
  brokerStatus: BrokerConsumerStatus = () => "not used",
) {
  let probing: Promise<{ databaseUp: boolean; applied: boolean }> | undefined;
  const probe = async () => {
    const databaseUp = await database.ping();
    return { databaseUp, applied: databaseUp && (await database.migrationsApplied()) };
  };
  return {
    async readiness(): Promise<HealthReport> {
      probing ??= probe().finally(() => (probing = undefined));
      const { databaseUp, applied } = await probing;
      return {
        status: databaseUp && applied ? "ready" : "unavailable",
        database: databaseUp ? "up" : "down",
        databaseKind: database.kind,
        migrationsApplied: applied,
        redis: live.redisStatus(),
        broker: brokerStatus(),
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
