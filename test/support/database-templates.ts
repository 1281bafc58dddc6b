import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { PrismaPg } from "@prisma/adapter-pg";
import { Client } from "pg";
import { loadBundledData } from "../../src/composition/bundled-data";
import { copyEmbeddedTemplate } from "../../src/db/embedded-template";
import { applyPendingMigrations } from "../../src/db/migrations";
import { dumpDataDir } from "../../src/db/throwaway-pglite";
import { BUNDLED_STATIONS_FILE } from "../../src/stations/station.service";
import { PRISMA_DIR } from "../../src/paths";
import { admin, databaseUrl } from "./postgres";

/** Where the migrated embedded database's dump is (set by the global setup for the test workers). */
export const PGLITE_DUMP_ENV = "TEST_PGLITE_DUMP";

/**
 * What a migrated database depends on: every migration file and the PGlite build. Templates are named
 * by it, so a run whose migrations differ never starts from another run's template.
 */
function migrationsFingerprint(): string {
  const hash = createHash("sha256");
  const dir = path.join(PRISMA_DIR, "migrations");
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .sort()) {
    hash.update(path.relative(dir, entry)).update("\0").update(readFileSync(entry)).update("\0");
  }
  hash.update(readFileSync(path.join(PRISMA_DIR, "..", "node_modules", "@electric-sql", "pglite", "package.json")));
  // The code that applies migrations and records them in _prisma_migrations, and the station data
  // every template holds (as a first start loads it).
  hash.update(readFileSync(path.join(PRISMA_DIR, "..", "src", "db", "migrations.ts")));
  hash.update(readFileSync(BUNDLED_STATIONS_FILE));
  hash.update(readFileSync(path.join(PRISMA_DIR, "..", "src", "stations", "station.store.ts")));
  return hash.digest("hex").slice(0, 16);
}

/**
 * A migrated embedded database holding the bundled stations, dumped (PGlite's dumpDataDir) to a file in
 * the temporary folder, made once per set of migrations: the in-memory databases tests ask for
 * (DATA_DIR=memory://, AppOptions.embeddedDatabaseDump) start from it instead of initialising a
 * cluster, applying every migration and loading the stations. Made from a copy of the build's
 * template (db/embedded-template.ts), which the global setup has made by now if the build had not.
 */
export async function migratedPgliteDump(): Promise<string> {
  const file = path.join(tmpdir(), `cgw-test-pglite-${migrationsFingerprint()}.tar`);
  await removeStaleDumps(file);
  if (existsSync(file)) return file;
  const folder = await mkdtemp(path.join(tmpdir(), "cgw-test-dump-source-"));
  let pglite: PGlite | undefined;
  try {
    if (!(await copyEmbeddedTemplate(folder)))
      throw new Error("No embedded template for these migrations: the global setup makes it before the dump");
    pglite = new PGlite(folder);
    const dump = await dumpDataDir(pglite);
    const partial = `${file}.${process.pid}`;
    await writeFile(partial, Buffer.from(await dump.arrayBuffer()));
    await rename(partial, file); // atomic: a run beside this one reads a whole dump or none
  } finally {
    await pglite?.close();
    await rm(folder, { recursive: true, force: true });
  }
  return file;
}

/** Dumps of other migrations, unused for an hour (a run on another checkout may still read its own). */
async function removeStaleDumps(current: string): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    const file = path.join(tmpdir(), name);
    if (!/^cgw-test-pglite-.*\.tar$/.test(name) || file === current) continue;
    const { mtimeMs } = await stat(file).catch(() => ({ mtimeMs: Date.now() }));
    if (Date.now() - mtimeMs > 3_600_000) await rm(file, { force: true });
  }
}

/**
 * A migrated PostgreSQL database holding the bundled stations that test databases are created from
 * (`CREATE DATABASE … TEMPLATE`), made once per set of migrations; templates of other migrations are dropped.
 */
export async function migratedPostgresTemplate(adminUrl: string): Promise<string> {
  const name = `gw_template_${migrationsFingerprint()}`;
  // Each template's comment is when a run last used it: those of other migrations unused for an hour
  // are dropped (a run on another checkout may be creating databases from its own).
  const existing = await admin(
    (c) =>
      c.query<{ datname: string; used: string | null }>(
        "SELECT datname, shobj_description(oid, 'pg_database') AS used FROM pg_database WHERE datname LIKE 'gw_template_%'",
      ),
    adminUrl,
  );
  for (const { datname, used } of existing.rows) {
    if (datname !== name && Date.now() - Number(used ?? 0) > 3_600_000)
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${datname}"`), adminUrl).catch(() => {});
  }
  const markUsed = () => admin((c) => c.query(`COMMENT ON DATABASE "${name}" IS '${Date.now()}'`), adminUrl);
  if (existing.rows.some((row) => row.datname === name)) {
    await markUsed();
    return name;
  }
  // Built under a name of its own and renamed when complete: a template is never half migrated.
  const building = `gw_building_${process.pid}`;
  await admin(
    (c) => c.query(`DROP DATABASE IF EXISTS "${building}"`).then(() => c.query(`CREATE DATABASE "${building}"`)),
    adminUrl,
  );
  const url = databaseUrl(building, adminUrl);
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await applyPendingMigrations(
      new PrismaPg({ connectionString: url, max: 2 }),
      async (sql) => (await client.query(sql)).rows as never,
    );
    await loadBundledData(new PrismaPg({ connectionString: url, max: 2 }));
  } finally {
    await client.end();
  }
  try {
    await admin((c) => c.query(`ALTER DATABASE "${building}" RENAME TO "${name}"`), adminUrl);
  } catch (error) {
    // Another run made it meanwhile.
    await admin((c) => c.query(`DROP DATABASE IF EXISTS "${building}" WITH (FORCE)`), adminUrl);
    if (!/already exists/.test((error as Error).message)) throw error;
  }
  await markUsed();
  return name;
}

/** The migrated embedded database's dump, read once per module registry (a test file run alone, or a shard). */
let dump: Blob | undefined;
export function pgliteDump(): Blob | undefined {
  const file = process.env[PGLITE_DUMP_ENV];
  if (!file) return undefined;
  dump ??= new Blob([readFileSync(file)]);
  return dump;
}
