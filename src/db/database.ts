import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PrismaClient } from "../../generated/prisma/client";
import { CliError } from "../errors";
import { DataDirInUseError, lockDataDir } from "./data-dir-lock";
import type { Driver } from "./driver";
import { copyEmbeddedTemplate } from "./embedded-template";
import { applyPendingMigrations, readMigrationList } from "./migrations";
import type { SqlExecutor } from "./sql-executor";

export type { SqlExecutor };

export type Prisma = PrismaClient;

/** Where the data lives: a PostgreSQL server, or the embedded PGlite in a folder ("memory://": in memory). */
export type DatabaseTarget =
  | { kind: "postgres"; url: string }
  /**
   * `dump`: a data-dir dump (PGlite's dumpDataDir) a memory:// database starts from. A new database in
   * a folder starts as a copy of the build's migrated template, when there is one (db/embedded-template.ts;
   * `templateDir`: where templates are, by default the build's).
   */
  | { kind: "pglite"; dataDir: string; dump?: Blob; templateDir?: string };

export interface Database {
  readonly prisma: Prisma;
  readonly sql: SqlExecutor;
  readonly kind: "postgres" | "pglite";
  /** Migrations applied by this open, in order. */
  readonly appliedMigrations: readonly string[];
  /** True when this open created the embedded database from a migrated copy (a dump or the build's template). */
  readonly createdMigrated: boolean;
  /** True when the database answers a trivial query. */
  ping(): Promise<boolean>;
  /** True when every migration of prisma/migrations is recorded as finished in `_prisma_migrations`. */
  migrationsApplied(): Promise<boolean>;
  close(): Promise<void>;
}

/** Loads only the driver of the kind opened (db/driver.ts). */
async function openDriver(target: DatabaseTarget): Promise<Driver> {
  if (target.kind === "postgres") return (await import("./postgres-driver.js")).openPostgresDriver(target.url);
  return (await import("./pglite-driver.js")).openPGliteDriver(target.dataDir, target.dump);
}

/**
 * The database the configuration names: PostgreSQL with DATABASE_URL, else the embedded one. When
 * another process holds the embedded one, fails with one line saying what to do instead (`whatInstead`).
 */
export async function openConfiguredDatabase(
  config: { readonly databaseUrl: string | undefined; readonly dataDir: string },
  whatInstead = "stop it first",
  embeddedDump?: Blob,
  driverStarted?: () => void,
): Promise<Database> {
  try {
    return await openDatabase(
      config.databaseUrl
        ? { kind: "postgres", url: config.databaseUrl }
        : { kind: "pglite", dataDir: config.dataDir, dump: embeddedDump },
      driverStarted,
    );
  } catch (error) {
    if (error instanceof DataDirInUseError)
      throw new CliError(`${error.message} (a running gateway?): ${whatInstead}.`);
    throw error;
  }
}

/**
 * True when a new embedded database starts migrated: from its dump (in memory), or as a copy of the
 * build's template (in a folder that holds no database yet; the folder is locked by now).
 */
async function startMigrated(target: Extract<DatabaseTarget, { kind: "pglite" }>): Promise<boolean> {
  if (target.dataDir.startsWith("memory://")) return target.dump !== undefined;
  if (target.dump) throw new Error("A data-dir dump can only start an in-memory embedded database");
  if (existsSync(path.join(target.dataDir, "PG_VERSION"))) return false;
  return copyEmbeddedTemplate(target.dataDir, target.templateDir);
}

/** What a gateway's start says to do when another process holds its embedded database. */
export const DATA_DIR_TAKEN = "stop it, or start this one with another DATA_DIR";

/**
 * Opens the database, applies pending migrations, and returns a Prisma client over it.
 * `driverStarted`: called once the driver is under way (the embedded database booting on its thread),
 * before the first statement.
 */
export async function openDatabase(target: DatabaseTarget, driverStarted?: () => void): Promise<Database> {
  let unlock = async () => {};
  if (target.kind === "pglite" && !target.dataDir.startsWith("memory://")) {
    await mkdir(target.dataDir, { recursive: true });
    unlock = await lockDataDir(target.dataDir);
  }
  let createdMigrated: boolean;
  let driver: Driver;
  try {
    createdMigrated = target.kind === "pglite" && (await startMigrated(target));
    driver = await openDriver(target);
  } catch (error) {
    await unlock();
    throw error;
  }
  driverStarted?.();
  const { factory, migrationFactory, sql } = driver;
  // Each step runs even when the one before it failed: the data folder's lock is released last, always.
  const closeDrivers = async () => {
    try {
      await driver.close();
    } finally {
      await unlock();
    }
  };
  let appliedMigrations: string[];
  let expectedMigrations: number;
  try {
    appliedMigrations = await applyPendingMigrations(migrationFactory, (text) => sql.query(text, []));
    expectedMigrations = (await readMigrationList()).migrationDirectories.length;
  } catch (error) {
    await closeDrivers().catch(() => {}); // the migration's failure is the one to report
    throw error;
  }
  const prisma = new PrismaClient({ adapter: factory });
  return {
    prisma,
    sql,
    kind: target.kind === "postgres" ? "postgres" : "pglite",
    appliedMigrations,
    createdMigrated,
    async ping() {
      try {
        await prisma.$queryRawUnsafe("SELECT 1");
        return true;
      } catch {
        return false;
      }
    },
    async migrationsApplied() {
      try {
        const [row] = await prisma.$queryRawUnsafe<Array<{ n: bigint }>>(
          "SELECT count(*) AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL",
        );
        return Number(row?.n ?? 0) >= expectedMigrations;
      } catch {
        return false;
      }
    },
    async close() {
      try {
        await prisma.$disconnect();
      } finally {
        await closeDrivers();
      }
    },
  };
}
