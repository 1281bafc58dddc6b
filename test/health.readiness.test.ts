import { openDatabase } from "../src/db/database";
import { createHealthService } from "../src/health/health.service";

/** Readiness under a crowd (src/health/health.service.ts): however many ask at once, the database is asked once. */
describe("readiness", () => {
  it("shares one probe of the database among the callers asking while it runs, and probes again after", async () => {
    const database = await openDatabase({ kind: "pglite", dataDir: "memory://" });
    try {
      let pings = 0;
      const counted = {
        ...database,
        ping: async () => {
          pings++;
          return database.ping();
        },
        migrationsApplied: () => database.migrationsApplied(),
      };
      const health = createHealthService(counted, { redisStatus: () => "not used" });
      const reports = await Promise.all(Array.from({ length: 200 }, () => health.readiness()));
      expect(new Set(reports.map((report) => report.status))).toEqual(new Set(["ready"]));
      expect(pings).toBe(1);
      // A later question is a new probe: an outage is seen at once, not after a cache expires.
      await health.readiness();
      expect(pings).toBe(2);
    } finally {
      await database.close();
    }
  });
});
