import { createHash } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { type Database, openDatabase } from "../../src/db/database";
import { sqlString } from "../../src/db/sql-literal";
import { newEmbeddedDataDir } from "./embedded-data-dirs";

/**
 * Open embedded databases that the test files of one Jest module registry (a shard: test/shards/)
 * take turns on. Starting PGlite is most of what a new embedded database costs a test (its WebAssembly
 * instance, its shared memory, its catalogue read), several times what putting one back costs. A
 * database given back is reset — its session discarded (DISCARD ALL: settings, role, listeners,
 * advisory locks, prepared statements, temporary tables), the tables written since truncated and
 * their statistics removed, its sequences put back, files the app wrote in its folder removed — and
 * then must match a digest of what it held when it opened (databaseState). One that does not, whose
 * reset fails (a transaction left open, a closed database), or whose app failed to stop, is closed
 * and removed, and the next lease opens a new copy of the template. What the digest does not look at
 * passes to the next file: a change inside PostgreSQL's own folders beyond its catalogues, a
 * placeholder setting (a custom `x.y` one) that DISCARD ALL empties but does not remove.
 *
 * A lease is one folder and its open database: an app given it uses the folder as its DATA_DIR, so
 * opening that folder again (a restart on the same DATA_DIR) fails at once — this process holds its
 * lock — instead of quietly starting on a new database. Tests that restart on one DATA_DIR give their
 * own (startApp with env.DATA_DIR).
 */
export interface EmbeddedLease {
  readonly database: Database;
  readonly dir: string;
  /**
   * Resets the database and returns it to the pool (or closes and removes it if it cannot be, or with
   * `keep: false`: what used it may still be running).
   */
  release(options?: { keep?: boolean }): Promise<void>;
}

interface Pooled {
  readonly database: Database;
  readonly dir: string;
  readonly remove: () => Promise<void>;
  /** The tables the template leaves empty (neither pages nor a row estimate): emptied on every return. */
  readonly emptied: readonly string[];
  /** Where each sequence stood when it opened: put back on every return. */
  readonly sequences: readonly SequenceState[];
  /** What it held when it opened (stateOf): a returned database must hold the same. */
  readonly opened: string;
  /** The folder's entries when it opened: anything else (the app's secrets.key) is removed on return. */
  readonly entries: ReadonlySet<string>;
  /** The pool's generation it was opened in: one given back after closeEmbeddedPool is not kept. */
  readonly generation: number;
}

/** Idle databases kept for the next lease; a file that ran more at once leaves only these open. */
const MAX_IDLE = 2;
const idle: Pooled[] = [];
/** Counted up by closeEmbeddedPool: databases of an earlier generation are closed when given back. */
let generation = 0;
/** Where setup-each-file.ts finds closeEmbeddedPool without importing this module into every file. */
const CLOSE_KEY = Symbol.for("cargo-gateway.test.closeEmbeddedPool");
/**
 * What the pool did, for tests of it: databases opened and reused, and given back but not kept — they
 * differed from their digest, their reset failed, or they were not to be kept (`keep: false`, the
 * pool full or closed).
 */
export const poolCounts = { opened: 0, reused: 0, differed: 0, failed: 0, notKept: 0 };

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
    async release({ keep = true } = {}) {
      if (released) return;
      released = true;
      if (keep) await giveBack(lease);
      else await notKept(lease);
    },
  };
}

/**
 * Closes the idle databases; one still leased is closed when it is given back (the end of a module
 * registry: setup-each-file.ts, whose afterAll may run before a file's own).
 */
export async function closeEmbeddedPool(): Promise<void> {
  generation += 1;
  const closing = idle.splice(0);
  await Promise.all(closing.map((pooled) => discard(pooled)));
}

async function openPooled(): Promise<Pooled> {
  (globalThis as Record<symbol, unknown>)[CLOSE_KEY] = closeEmbeddedPool;
  const { dir, remove } = await newEmbeddedDataDir();
  const database = await openDatabase({ kind: "pglite", dataDir: dir });
  try {
    const written = new Set(await writtenTables(database));
    const pooled: Pooled = {
      database,
      dir,
      remove,
      emptied: (await userTables(database)).filter((table) => !written.has(table)),
      sequences: await database.sql.query<SequenceState>(
        "SELECT format('%I.%I', schemaname, sequencename) AS name, start_value::text AS start, last_value::text AS last FROM pg_sequences",
        [],
      ),
      opened: await stateOf(database, dir),
      entries: new Set(await readdir(dir)),
      generation,
    };
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
  let state: string;
  try {
    const { sql } = pooled.database;
    // Refused inside a transaction block: a database a test left in one is discarded.
    await sql.query("DISCARD ALL", []);
    // Only the tables written since (rows, pages, a row estimate): a TRUNCATE makes new files for a
    // table and each of its indexes, several milliseconds a table here. It keeps their statistics.
    const emptied = new Set(pooled.emptied);
    const written = (await writtenTables(pooled.database)).filter((table) => emptied.has(table));
    if (written.length > 0) {
      await sql.query(`TRUNCATE ${written.join(", ")} CASCADE`, []);
      await sql.query("DELETE FROM pg_statistic WHERE starelid = ANY ($1::regclass[])", [pooled.emptied]);
    }
    await sql.query(
      `SELECT setval(name::regclass, coalesce(last, start)::bigint, last IS NOT NULL)
       FROM unnest($1::text[], $2::text[], $3::text[]) AS s(name, start, last)`,
      [pooled.sequences.map((q) => q.name), pooled.sequences.map((q) => q.start), pooled.sequences.map((q) => q.last)],
    );
    for (const entry of await readdir(pooled.dir))
      if (!pooled.entries.has(entry)) await rm(path.join(pooled.dir, entry), { recursive: true, force: true });
    state = await stateOf(pooled.database, pooled.dir);
  } catch {
    poolCounts.failed += 1;
    return discard(pooled);
  }
  if (state !== pooled.opened) {
    poolCounts.differed += 1;
    return discard(pooled);
  }
  if (pooled.generation !== generation || idle.length >= MAX_IDLE) return notKept(pooled);
  idle.push(pooled);
}

async function notKept(pooled: Pooled): Promise<void> {
  poolCounts.notKept += 1;
  await discard(pooled);
}

/** What a returned database must hold again: its digest and its folder's settings files (ALTER SYSTEM rewrites one). */
async function stateOf(database: Database, dir: string): Promise<string> {
  return (await databaseState(database)) + (await settingsFiles(dir));
}

/** The contents of the folder's settings files (postgresql.conf, postgresql.auto.conf, pg_hba.conf, …). */
async function settingsFiles(dir: string): Promise<string> {
  const names = (await readdir(dir)).filter((name) => name.endsWith(".conf")).sort();
  const hash = createHash("sha256");
  for (const name of names)
    hash
      .update(name)
      .update("\0")
      .update(await readFile(path.join(dir, name)))
      .update("\0");
  return hash.digest("hex");
}

interface SequenceState {
  name: string;
  start: string;
  /** Null: never used (the next value is `start`). */
  last: string | null;
}

/**
 * The database's own tables that hold pages (rows, or rows since deleted) or a row estimate (a VACUUM
 * or ANALYZE counted them; a TRUNCATE takes both back). A table of a new copy that is neither is one
 * the template leaves empty.
 */
async function writtenTables(database: Database): Promise<string[]> {
  const rows = await database.sql.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND ${OWN("n.nspname")} AND (pg_relation_size(c.oid) > 0 OR c.reltuples >= 0)`,
    [],
  );
  return rows.map((row) => row.name);
}

async function discard(pooled: Pooled): Promise<void> {
  await pooled.database.close().catch(() => {});
  await pooled.remove();
}

/** The database's own schemas, temporary ones included (PostgreSQL's own and TOAST's left out). */
const OWN = (namespace: string) =>
  `${namespace} NOT IN ('pg_catalog', 'information_schema') AND ${namespace} NOT LIKE 'pg\\_toast%'`;
/** Catalogue rows of the database's own objects, whole (`x::text`): every attribute counts. */
const ownRows = (catalog: string, namespaceColumn: string) =>
  `SELECT format('${catalog} %s', x::text) FROM ${catalog} x JOIN pg_namespace n ON n.oid = x.${namespaceColumn} WHERE ${OWN("n.nspname")}`;
/** Rows of catalogues that name objects by oid or hold no namespace: whole, all of them. */
const allRows = (catalog: string) => `SELECT format('${catalog} %s', x::text) FROM ${catalog} x`;
/** Catalogue rows that belong to a relation of the database's own schemas. */
const relationRows = (catalog: string, relationColumn: string) =>
  `SELECT format('${catalog} %s', x::text) FROM ${catalog} x JOIN pg_class c ON c.oid = x.${relationColumn}
   JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${OWN("n.nspname")}`;

/** Every table of the database's own schemas, quoted for SQL. */
async function userTables(database: Database): Promise<string[]> {
  const rows = await database.sql.query<{ name: string }>(
    `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p') AND ${OWN("n.nspname")} ORDER BY 1`,
    [],
  );
  return rows.map((row) => row.name);
}

/**
 * A digest of what a test could change and the next one would see, the catalogues' rows whole where
 * they can be: the schemas and their objects (relations with their privileges and the page count and
 * row estimate the planner keeps, columns, defaults, constraints, indexes, triggers and whether they
 * fire, rules and views, functions, operators and their classes, casts, types and enum values,
 * collations, conversions, text search, policies, statistics, comments), databases, roles and their
 * memberships, default privileges, extensions, publications, foreign servers, settings of databases
 * and roles, large objects, the sequences' definitions and positions, and each table's row count and
 * newest row version (`xmin`): a row inserted, updated (PostgreSQL writes a new version) or deleted
 * since changes one of the two, as transaction ids only grow. Left out: a relation's file number,
 * which a TRUNCATE changes, and an index's page count and row estimate, which a TRUNCATE sets to none
 * and unknown where a new copy's (built on its empty table by the migrations) has one page and none.
 */
export async function databaseState(database: Database): Promise<string> {
  const tables = await userTables(database);
  const parts = [
    `SELECT format('pg_namespace %s', n::text) FROM pg_namespace n WHERE ${OWN("n.nspname")} AND n.nspname NOT LIKE 'pg\\_temp%'`,
    `SELECT format('pg_class %s.%s %s', n.nspname, c.relname,
       row(c.reltype, c.relowner, c.relam, CASE WHEN c.relkind <> 'i' THEN row(c.relpages, c.reltuples) END,
           c.relallvisible, c.reltoastrelid, c.relhasindex,
           c.relpersistence, c.relkind, c.relnatts, c.relchecks, c.relhasrules, c.relhastriggers, c.relrowsecurity,
           c.relforcerowsecurity, c.relreplident, c.relispartition, c.reloptions, c.relacl)::text)
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE ${OWN("n.nspname")}`,
    relationRows("pg_attribute", "attrelid"),
    relationRows("pg_attrdef", "adrelid"),
    relationRows("pg_index", "indrelid"),
    relationRows("pg_trigger", "tgrelid"),
    relationRows("pg_rewrite", "ev_class"),
    relationRows("pg_policy", "polrelid"),
    relationRows("pg_statistic", "starelid"),
    relationRows("pg_sequence", "seqrelid"),
    ownRows("pg_constraint", "connamespace"),
    ownRows("pg_proc", "pronamespace"),
    ownRows("pg_type", "typnamespace"),
    ownRows("pg_operator", "oprnamespace"),
    ownRows("pg_opclass", "opcnamespace"),
    ownRows("pg_opfamily", "opfnamespace"),
    ownRows("pg_collation", "collnamespace"),
    ownRows("pg_conversion", "connamespace"),
    ownRows("pg_ts_config", "cfgnamespace"),
    ownRows("pg_ts_dict", "dictnamespace"),
    ownRows("pg_ts_parser", "prsnamespace"),
    ownRows("pg_ts_template", "tmplnamespace"),
    ownRows("pg_statistic_ext", "stxnamespace"),
    allRows("pg_cast"),
    allRows("pg_default_acl"),
    allRows("pg_auth_members"),
    allRows("pg_publication"),
    allRows("pg_foreign_data_wrapper"),
    allRows("pg_foreign_server"),
    // Objects made after the cluster (oids from 16384 on) with a comment.
    `SELECT format('pg_description %s', x::text) FROM pg_description x WHERE x.objoid >= 16384`,
    `SELECT format('pg_shdescription %s', x::text) FROM pg_shdescription x WHERE x.objoid >= 16384`,
    // Not the transaction-id horizons, which move on their own.
    `SELECT format('pg_database %s', row(datname, datdba, encoding, datlocprovider, datistemplate, datallowconn, datconnlimit, datacl)::text) FROM pg_database`,
    allRows("pg_enum"),
    allRows("pg_authid"),
    allRows("pg_extension"),
    allRows("pg_event_trigger"),
    allRows("pg_db_role_setting"),
    allRows("pg_largeobject_metadata"),
    `SELECT format('pg_sequences %s.%s %s', schemaname, sequencename, last_value) FROM pg_sequences`,
    ...tables.map(
      (table) => `SELECT format('rows %s %s %s', ${sqlString(table)}, count(*), max(xmin::text::bigint)) FROM ${table}`,
    ),
  ];
  const [row] = await database.sql.query<{ state: string }>(
    `SELECT md5(string_agg(line, E'\\n' ORDER BY line)) AS state FROM (${parts.map((part) => `(${part})`).join(" UNION ALL ")}) AS lines(line)`,
    [],
  );
  return row?.state ?? "";
}
