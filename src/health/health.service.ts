import type { Database } from "../db/database";
import type { LiveEvents } from "../live/live-events";

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
}

/** Readiness: the database answers and every migration is recorded as applied. */
export function createHealthService(database: Database, live: Pick<LiveEvents, "redisStatus">) {
  return {
    async readiness(): Promise<HealthReport> {
      const databaseUp = await database.ping();
      const applied = databaseUp && (await database.migrationsApplied());
      return {
        status: databaseUp && applied ? "ready" : "unavailable",
        database: databaseUp ? "up" : "down",
        databaseKind: database.kind,
        migrationsApplied: applied,
        redis: live.redisStatus(),
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
