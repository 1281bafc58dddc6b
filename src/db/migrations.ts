import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import type { MigrationList } from "@prisma/schema-engine-wasm" with { "resolution-mode": "import" };
import { PrismaPGlite } from "pglite-prisma-adapter";
import { PRISMA_DIR } from "../paths";
import { openSchemaEngine } from "./schema-engine";
import { throwawayPGlite } from "./throwaway-pglite";

export { PRISMA_DIR };
const SCHEMA_FILE = "schema.prisma";
const LOCK_FILE = "migration_lock.toml";
const NO_FILTERS = { externalTables: [], externalEnums: [] };

export async function readSchema(prismaDir = PRISMA_DIR): Promise<{ fileName: string; text: string }> {
  return { fileName: SCHEMA_FILE, text: await readFile(path.join(prismaDir, SCHEMA_FILE), "utf8") };
}

/** The migrations folder in Prisma's own layout, as the schema engine wants it. */
export async function readMigrationList(prismaDir = PRISMA_DIR): Promise<MigrationList> {
  const baseDir = path.join(prismaDir, "migrations");
  const entries = await readdir(baseDir, { withFileTypes: true }).catch(() => []);
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const migrationDirectories = await Promise.all(
    names.map(async (name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: { tag: "ok" as const, value: await readFile(path.join(baseDir, name, "migration.sql"), "utf8") },
      },
    })),
  );
  const lockContent = await readFile(path.join(baseDir, LOCK_FILE), "utf8").catch(() => null);
  return {
    baseDir,
    lockfile: { path: LOCK_FILE, content: lockContent },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

/**
 * Applies the migrations that are not yet in `_prisma_migrations`, as `prisma migrate deploy` would.
 * When every migration is already recorded as finished with the checksum of its file (the usual
 * restart), the schema engine is not loaded at all: it is WebAssembly of some 10 MiB whose runtime
 * leaves timers behind.
 */
export async function applyPendingMigrations(
  adapterFactory: SqlMigrationAwareDriverAdapterFactory,
  query: (sql: string) => Promise<Array<Record<string, unknown>>>,
  prismaDir = PRISMA_DIR,
): Promise<string[]> {
  const migrationsList = await readMigrationList(prismaDir);
  if (await allRecorded(migrationsList, query)) return [];
  const { engine, close } = await openSchemaEngine(await readSchema(prismaDir), adapterFactory);
  try {
    const { appliedMigrationNames } = await engine.applyMigrations({ migrationsList, filters: NO_FILTERS });
    return appliedMigrationNames;
  } finally {
    await close();
  }
}

/**
 * True when `_prisma_migrations` records each migration of the folder as finished, not rolled back,
 * with its file's checksum, and holds no failed attempt. Anything else (no table yet, a new, edited or
 * failed migration) is left to the schema engine, which applies or reports it.
 */
async function allRecorded(
  list: MigrationList,
  query: (sql: string) => Promise<Array<Record<string, unknown>>>,
): Promise<boolean> {
  let rows: Array<Record<string, unknown>>;
  try {
    rows = await query(
      "SELECT migration_name, checksum, finished_at IS NOT NULL AND rolled_back_at IS NULL AS done, rolled_back_at IS NOT NULL AS rolled_back FROM _prisma_migrations",
    );
  } catch {
    return false; // no table: a new database
  }
  if (rows.some((row) => !row.done && !row.rolled_back)) return false; // a failed or unfinished attempt
  const recorded = new Map(rows.filter((row) => row.done).map((row) => [String(row.migration_name), row.checksum]));
  return list.migrationDirectories.every((dir) => {
    const file = dir.migrationFile.content;
    return file.tag === "ok" && recorded.get(dir.path) === createHash("sha256").update(file.value).digest("hex");
  });
}

/**
 * The SQL that would bring a database built from the migrations to what schema.prisma describes;
 * empty when they agree. The migrations are replayed into a throwaway in-memory PGlite, so no
 * database server is needed.
 */
export async function diffMigrationsToSchema(prismaDir = PRISMA_DIR): Promise<string> {
  const schema = await readSchema(prismaDir);
  const migrations = await readMigrationList(prismaDir);
  // Two throwaway databases: the engine's own connection and the shadow it replays migrations into.
  // (The adapter's own connectToShadowDb opens a PGlite that nobody closes.)
  const scratch = await throwawayPGlite();
  const shadow = await throwawayPGlite(); // at once: the empty cluster is made by now
  const factory: SqlMigrationAwareDriverAdapterFactory = {
    provider: "postgres",
    adapterName: "pglite-scratch",
    connect: () => new PrismaPGlite(scratch).connect(),
    connectToShadowDb: () => new PrismaPGlite(shadow).connect(),
  };
  try {
    const { engine, close } = await openSchemaEngine(schema, factory);
    try {
      const result = await engine.diff({
        from: migrations.migrationDirectories.length === 0 ? { tag: "empty" } : { tag: "migrations", ...migrations },
        to: { tag: "schemaDatamodel", files: [{ path: schema.fileName, content: schema.text }] },
        script: true,
        exitCode: null,
        filters: NO_FILTERS,
      });
      const sql = result.stdout ?? "";
      return isEmptyMigration(sql) ? "" : sql;
    } finally {
      await close();
    }
  } finally {
    await Promise.all([scratch.close(), shadow.close()]);
  }
}

function isEmptyMigration(sql: string): boolean {
  return sql.split("\n").every((line) => line.trim() === "" || line.trim().startsWith("--"));
}

/** Writes prisma/migrations/<timestamp>_<name>/migration.sql from the pending diff; null when there is none. */
export async function createMigration(name: string, prismaDir = PRISMA_DIR, now = new Date()): Promise<string | null> {
  if (!/^[a-z0-9_]{1,60}$/.test(name))
    throw new Error(`Migration name must be lower-case letters, digits and "_": "${name}"`);
  const sql = await diffMigrationsToSchema(prismaDir);
  if (sql === "") return null;
  const stamp = now.toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join(prismaDir, "migrations", `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, "migration.sql"), sql);
  const lockPath = path.join(prismaDir, "migrations", LOCK_FILE);
  await readFile(lockPath).catch(() =>
    writeFile(
      lockPath,
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "postgresql"\n',
    ),
  );
  return dir;
}
