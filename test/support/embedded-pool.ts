import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { type Database, openDatabase } from "../../src/db/database";
import { newEmbeddedDataDir } from "./embedded-data-dirs";

/**
 * Open embedded databases that the test files of one Jest module registry (a shard: test/shards/)
 * take turns on. Starting PGlite is most of what a new embedded database costs a test (its WebAssembly
 * instance, its shared memory, its catalogue read), several times what putting one back as it was
 * costs: a database given back is reset and checked to be as it was opened — a copy of the build's
 * template — before the next test file gets it; one that is not (a test changed the stations or the
 * schema, closed it, left it unusable) is closed and removed, and the next lease opens a new one.
 *
 * A lease is one folder and its open database: an app given it uses the folder as its DATA_DIR, so
 * opening that folder again (a restart on the same DATA_DIR) fails at once — this process holds its
 * lock — instead of quietly starting on a new database. Tests that restart on one DATA_DIR give their
 * own (startApp with env.DATA_DIR).
 */
export interface EmbeddedLease {
  readonly database: Database;
  readonly dir: string;
  /** Resets the database and returns it to the pool (or closes and removes it if it cannot be). */
  release(): Promise<void>;
}

interface Pooled {
  readonly database: Database;
  readonly dir: string;
  readonly remove: () => Promise<void>;
  /** The tables empty when it opened: emptied on every return. */
  readonly emptied: readonly string[];
  /** Where each sequence stood when it opened: put back on every return. */
  readonly sequences: readonly SequenceState[];
  /** What it held when it opened (schemaState): a returned database must hold the same. */
  readonly opened: string;
  /** The folder's entries when it opened: anything else (the app's secrets.key) is removed on return. */
  readonly entries: ReadonlySet<string>;
}

const idle: Pooled[] = [];
const all = new Set<Pooled>();
/** What the pool did, for tests of it. */
export const poolCounts = { opened: 0, reused: 0, discarded: 0 };

/** An open embedded database of the template's contents, for one test file until it releases it. */
export async function leaseEmbeddedDatabase(): Promise<EmbeddedLease> {
  let pooled = idle.pop();
  if (pooled) poolCounts.reused += 1;
  else pooled = await openPooled();
  const lease = pooled;
  let released = false;
  return {
    database: lease.database,
    dir: lease.dir,
    async release() {
      if (released) return;
      released = true;
      await giveBack(lease);
    },
  };
}

/** Closes every database of the pool, leased or not (the end of a module registry: setup-each-file.ts). */
export async function closeEmbeddedPool(): Promise<void> {
  idle.length = 0;
  const closing = [...all];
  all.clear();
  await Promise.all(closing.map((pooled) => discard(pooled)));
}

async function openPooled(): Promise<Pooled> {
  const { dir, remove } = await newEmbeddedDataDir();
  const database = await openDatabase({ kind: "pglite", dataDir: dir });
  try {
    const pooled: Pooled = {
      database,
      dir,
      remove,
      emptied: await tablesWithRows(database, await userTables(database), false),
      sequences: await database.sql.query<SequenceState>(
        "SELECT format('%I.%I', schemaname, sequencename) AS name, start_value::text AS start, last_value::text AS last FROM pg_sequences",
        [],
      ),
      opened: await databaseState(database),
      entries: new Set(await readdir(dir)),
    };
    all.add(pooled);
    poolCounts.opened += 1;
    return pooled;
  } catch (error) {
    await database.close().catch(() => {});
    await remove();
    throw error;
  }
}

/** Puts a returned database back as it opened, or discards it when it cannot be. */
async function giveBack(pooled: Pooled): Promise<void> {
  if (!all.has(pooled)) return; // the pool was closed meanwhile
  try {
    const { sql } = pooled.database;
    // What a session may have left set: parameters, listeners, advisory locks.
    await sql.script("RESET ALL; UNLISTEN *; SELECT pg_advisory_unlock_all();");
    // Only the tables written since: a TRUNCATE makes new files for a table and each of its indexes,
    // which costs the embedded database several milliseconds a table.
    const written = await tablesWithRows(pooled.database, pooled.emptied, true);
    if (written.length > 0) await sql.query(`TRUNCATE ${written.join(", ")} CASCADE`, []);
    for (const { name, start, last } of pooled.sequences)
      await sql.query("SELECT setval($1::regclass, $2::bigint, $3)", [name, last ?? start, last !== null]);
    for (const entry of await readdir(pooled.dir))
      if (!pooled.entries.has(entry)) await rm(path.join(pooled.dir, entry), { recursive: true, force: true });
    if ((await databaseState(pooled.database)) !== pooled.opened)
      throw new Error("the database differs from the template after its reset");
    idle.push(pooled);
  } catch {
    poolCounts.discarded += 1;
    all.delete(pooled);
    await discard(pooled);
  }
}

interface SequenceState {
  name: string;
  start: string;
  /** Null: never used (the next value is `start`). */
  last: string | null;
}

/** Which of `tables` hold rows (`withRows`) or none. */
async function tablesWithRows(database: Database, tables: readonly string[], withRows: boolean): Promise<string[]> {
  if (tables.length === 0) return [];
  const rows = await database.sql.query<{ name: string; has: boolean }>(
    tables
      .map((table) => `SELECT ${sqlText(table)} AS name, EXISTS (SELECT 1 FROM ${table}) AS has`)
      .join(" UNION ALL "),
    [],
  );
  return rows.filter((row) => row.has === withRows).map((row) => row.name);
}

async function discard(pooled: Pooled): Promise<void> {
  await pooled.database.close().catch(() => {});
  await pooled.remove();
}

const USER_NAMESPACES = `n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp%'`;

const sqlText = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** Every table of the database's own schemas, quoted for SQL. */
async function userTables(database: Database): Promise<string[]> {
  const rows = await database.sql.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND ${USER_NAMESPACES} ORDER BY 1`,
    [],
  );
  return rows.map((row) => row.name);
}

/**
 * A digest of what a test could change and the next one would see: the schema (relations, columns,
 * defaults, constraints, indexes, triggers, functions, views), the sequences' positions, and each
 * table's row count and newest row version (`xmin`): a row inserted, updated (PostgreSQL writes a new
 * version) or deleted since changes one of the two, as transaction ids only grow.
 */
export async function databaseState(database: Database): Promise<string> {
  const tables = await userTables(database);
  const parts = [
    `SELECT format('%s.%s %s', n.nspname, c.relname, c.relkind) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${USER_NAMESPACES}`,
    `SELECT format('%s.%s %s %s %s %s', c.relname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, d.adrelid))
       FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
       WHERE a.attnum > 0 AND NOT a.attisdropped AND ${USER_NAMESPACES}`,
    `SELECT format('%s %s', conname, pg_get_constraintdef(co.oid)) FROM pg_constraint co JOIN pg_namespace n ON n.oid = co.connamespace WHERE ${USER_NAMESPACES}`,
    `SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${USER_NAMESPACES}`,
    `SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t WHERE NOT t.tgisinternal`,
    `SELECT format('%s.%s %s', n.nspname, p.proname, md5(p.prosrc)) FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE ${USER_NAMESPACES}`,
    `SELECT format('%s %s', c.relname, pg_get_viewdef(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('v', 'm') AND ${USER_NAMESPACES}`,
    `SELECT format('%s.%s %s', schemaname, sequencename, last_value) FROM pg_sequences`,
    ...tables.map(
      (table) => `SELECT format('%s %s %s', ${sqlText(table)}, count(*), max(xmin::text::bigint)) FROM ${table}`,
    ),
  ];
  const [row] = await database.sql.query<{ state: string }>(
    `SELECT md5(string_agg(line, E'\\n' ORDER BY line)) AS state FROM (${parts.map((part) => `(${part})`).join(" UNION ALL ")}) AS lines(line)`,
    [],
  );
  return row?.state ?? "";
}
