import { param, sql, statement } from "../sql-statement";

/** The advisory locks' keys, one per use, in one place so that no two uses share one by chance. */
export const LOCK_KEYS = {
  /** Station imports, across every instance sharing the database. */
  stationImport: 7_310_001,
  /** The first client's creation, by instances started at once on an empty database. */
  bootstrapClient: 7_310_002,
  /** "Compare the settings, then register" as one step (register-instance.sql.ts). */
  instanceRegistry: 7_240_024,
} as const;

/** Holds the advisory lock `key` until the transaction ends, waiting for it first. */
export const advisoryXactLock = statement<{ key: number }>(
  "db/advisory-xact-lock",
  sql`SELECT pg_advisory_xact_lock(${param("key")}::bigint)`,
);
