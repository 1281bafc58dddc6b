import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { SqlExecutor } from "./sql-executor";

/**
 * One database's connections as the rest of db/ uses them. Each kind's setup lives in a module of its
 * own (postgres-driver.ts, pglite-driver.ts), loaded when that kind is opened: the embedded default
 * does not load Prisma's `pg` adapter. (Both client libraries are still loaded by other modules: `pg`
 * for PostgreSQL's notifications, PGlite by the migrations and the embedded template.)
 */
export interface Driver {
  /** What Prisma's client runs on. */
  readonly factory: SqlMigrationAwareDriverAdapterFactory;
  /** What the schema engine migrates through (PostgreSQL: a short-lived pool of its own). */
  readonly migrationFactory: SqlMigrationAwareDriverAdapterFactory;
  readonly sql: SqlExecutor;
  /** Ends the connections (PostgreSQL) or stops the embedded database. */
  close(): Promise<void>;
}
