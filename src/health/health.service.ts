import type { Database } from "../db/database";

export interface HealthReport {
  status: "ready" | "unavailable";
  database: "up" | "down";
  databaseKind: "postgres" | "pglite";
  migrationsApplied: boolean;
}

/** Readiness: the database answers and every migration is recorded as applied. */
export function createHealthService(database: Database) {
  return {
    async readiness(): Promise<HealthReport> {
      const databaseUp = await database.ping();
      const applied = databaseUp && (await database.migrationsApplied());
      return {
        status: databaseUp && applied ? "ready" : "unavailable",
        database: databaseUp ? "up" : "down",
        databaseKind: database.kind,
        migrationsApplied: applied,
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
