import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PrismaClient } from "../../generated/prisma/client";
import { CliError } from "../errors";
import { DataDirInUseError, lockDataDir } from "./data-dir-lock";
import { copyEmbeddedTemplate } from "./embedded-template";
import { applyPendingMigrations, readMigrationList } from "./migrations";

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

/**
 * Raw SQL on the same database, past Prisma: for statements on a hot path where Prisma's own cost
 * per call (about a millisecond of this thread's time) dominates (the delivery worker's claim, record
 * and release). Numbered parameters; array parameters need an explicit cast (`$1::uuid[]`).
 */
export interface SqlExecutor {
  query<T>(text: string, params: readonly unknown[]): Promise<T[]>;
  /**
   * Several statements, separated by semicolons, in one round trip (the simple query protocol), run
   * as one implicit transaction: a lock one statement takes is held until the last one ends, and
   * each statement reads what had committed when it started (READ COMMITTED) — after the locks the
   * statements before it waited for. No parameters: values are written in with `db/sql-literal.ts`.
   * Answers the rows of each statement, in order.
   */
  script(text: string): Promise<unknown[][]>;
}

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

const POOL_SIZE = 10;
const POOL_CONNECT_TIMEOUT_MS = 5_000;

function adapterFor(target: DatabaseTarget): {
  factory: SqlMigrationAwareDriverAdapterFactory;
  pglite?: PGlite;
  pool?: pg.Pool;
  migrationFactory?: SqlMigrationAwareDriverAdapterFactory;
} {
  if (target.kind === "postgres") {
    // A connection timeout keeps a dead server from hanging requests. More than one connection: with
    // Prisma 7's pg adapter, a pool of one can time out the first interactive transaction.
    const pool = new pg.Pool({
      connectionString: target.url,
      max: POOL_SIZE,
      connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
    });
    // When PostgreSQL stops or restarts, every open connection emits "error". The adapter listens on
    // idle connections and inside transactions only; a connection checked out for a plain query in
    // between had no listener, and an unheard "error" event ends the process. Every connection gets
    // one for its whole life: the query running on it fails (and answers 503), the pool drops it.
    pool.on("connect", (client) => client.on("error", () => {}));
    pool.on("error", () => {});
    // Ours to end (in close). Migrations get their own short-lived pool: the schema engine holds a
    // session-level advisory lock, which only closing its connection releases for other instances.
    return {
      factory: new PrismaPg(pool),
      pool,
      migrationFactory: new PrismaPg({
        connectionString: target.url,
        max: 2,
        connectionTimeoutMillis: POOL_CONNECT_TIMEOUT_MS,
      }),
    };
  }
  const pglite = new PGlite(target.dataDir, {
    ...(target.dump ? { loadDataDir: target.dump } : {}),
    // As a start parameter: PGlite's `postgresqlconf` option would rewrite DATA_DIR/postgresql.conf.
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  });
  return { factory: new PrismaPGlite(pglite), pglite };
}

/**
 * PostgreSQL's own cache inside the embedded database's WebAssembly memory (PGlite's default is
 * 128MB, all of it resident once touched). The gateway's working set is small and the data files are
 * cached by the operating system anyway. Measured in-process after start and a collection: 440 MB
 * resident with the default, 306 MB with 16MB.
 */
const PGLITE_SHARED_BUFFERS = "16MB";

/**
 * The database the configuration names: PostgreSQL with DATABASE_URL, else the embedded one. When
 * another process holds the embedded one, fails with one line saying what to do instead (`whatInstead`).
 */
export async function openConfiguredDatabase(
  config: { readonly databaseUrl: string | undefined; readonly dataDir: string },
  whatInstead = "stop it first",
  embeddedDump?: Blob,
): Promise<Database> {
  try {
    return await openDatabase(
      config.databaseUrl
        ? { kind: "postgres", url: config.databaseUrl }
        : { kind: "pglite", dataDir: config.dataDir, dump: embeddedDump },
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

/** Opens the database, applies pending migrations, and returns a Prisma client over it. */
export async function openDatabase(target: DatabaseTarget): Promise<Database> {
  let unlock = async () => {};
  if (target.kind === "pglite" && !target.dataDir.startsWith("memory://")) {
    await mkdir(target.dataDir, { recursive: true });
    unlock = await lockDataDir(target.dataDir);
  }
  const createdMigrated = target.kind === "pglite" && (await startMigrated(target));
  const { factory, pglite, pool, migrationFactory } = adapterFor(target);
  // PGlite runs one query at a time (its own queue) and pg's pool is shared with Prisma's adapter:
  // these statements take turns with Prisma's on the same connections.
  const sql: SqlExecutor = pool
    ? {
        query: async <T>(text: string, params: readonly unknown[]) =>
          (await pool.query(text, params as unknown[])).rows as T[],
        script: async (text: string) => {
          // Without parameters pg sends a simple query; with several statements it answers a list.
          const results = (await pool.query(text)) as pg.QueryResult | pg.QueryResult[];
          return (Array.isArray(results) ? results : [results]).map((result) => result.rows as unknown[]);
        },
      }
    : {
        query: async <T>(text: string, params: readonly unknown[]) =>
          (await pglite!.query<T>(text, params as unknown[])).rows,
        script: async (text: string) => (await pglite!.exec(text)).map((result) => result.rows),
      };
  // Each step runs even when the one before it failed: the data folder's lock is released last, always.
  const closeDrivers = async () => {
    try {
      await pool?.end();
    } finally {
      try {
        await pglite?.close();
      } finally {
        await unlock();
      }
    }
  };
  let appliedMigrations: string[];
  let expectedMigrations: number;
  try {
    appliedMigrations = await applyPendingMigrations(migrationFactory ?? factory, (text) => sql.query(text, []));
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
