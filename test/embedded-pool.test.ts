/**
 * The test files' pool of open embedded databases (test/support/embedded-pool.ts): a database given
 * back is reset to what a new copy of the build's template holds, as far as its digest sees, or is not
 * handed out again.
 */
import { writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { DataDirInUseError } from "../src/db/data-dir-lock";
import { openDatabase } from "../src/db/database";
import { newEmbeddedDataDir } from "./support/embedded-data-dirs";
import {
  closeEmbeddedPool,
  databaseState,
  type EmbeddedLease,
  leaseEmbeddedDatabase,
  poolCounts,
} from "./support/embedded-pool";
import { ADMIN_KEY, Disposers, silentLogger, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { fixtures } from "./support/test-database";

describe("the embedded databases test files take turns on", () => {
  const disposers = new Disposers();
  let pristine: string;

  beforeAll(async () => {
    // What a new copy of the template holds, opened as any gateway opens one.
    const { dir, remove } = await newEmbeddedDataDir();
    disposers.add(remove);
    const fresh = await openDatabase({ kind: "pglite", dataDir: dir });
    try {
      pristine = await databaseState(fresh);
    } finally {
      await fresh.close();
    }
  });
  afterAll(() => disposers.disposeAll());

  /** A lease released by the end of the file if the test did not release it (a failed one). */
  const lease = async (): Promise<EmbeddedLease> => {
    const leased = await leaseEmbeddedDatabase();
    disposers.add(() => leased.release());
    return leased;
  };
  const one = async <T>(leased: EmbeddedLease, sql: string) =>
    (await leased.database.sql.query<Record<string, T>>(sql, []))[0]!;

  /** Gives `leased` back and takes the next lease, which must be the same database. */
  const reusedAfter = async (leased: EmbeddedLease): Promise<EmbeddedLease> => {
    const reused = poolCounts.reused;
    await leased.release();
    const next = await lease();
    expect(poolCounts.reused).toBe(reused + 1);
    expect(next.dir).toBe(leased.dir);
    return next;
  };

  it("a database given back is handed out again holding what a new copy holds", async () => {
    const first = await lease();
    expect(await databaseState(first.database)).toBe(pristine);
    const rows = fixtures(first.database);
    const client = await rows.client();
    await rows.delivery({ subscriptionId: await rows.subscription(client), clientId: client });
    await writeFile(path.join(first.dir, "secrets.key"), "an app's key file");
    expect(await databaseState(first.database)).not.toBe(pristine);

    const second = await reusedAfter(first);
    // Rows gone, sequences back at their start, the app's files gone.
    expect(await databaseState(second.database)).toBe(pristine);
    expect(await second.database.prisma.client.count()).toBe(0);
    expect(existsSync(path.join(second.dir, "secrets.key"))).toBe(false);
    const event = await second.database.prisma.statusEvent.findUniqueOrThrow({
      where: { id: await fixtures(second.database).event() },
    });
    expect(event.seq).toBe(1n);
    await second.release();
  });

  it("a session's settings, listeners, advisory locks and temporary tables do not reach the next file", async () => {
    const first = await lease();
    await first.database.sql.script(
      `SET statement_timeout = 1234; LISTEN somewhere; SELECT pg_advisory_lock(42);
       CREATE TEMPORARY TABLE client (id int); INSERT INTO client VALUES (1);`,
    );
    const second = await reusedAfter(first);
    expect(await one(second, "SELECT current_setting('statement_timeout') AS v")).toEqual({ v: "0" });
    expect(await one(second, "SELECT count(*)::int AS v FROM pg_listening_channels()")).toEqual({ v: 0 });
    expect(await one(second, "SELECT count(*)::int AS v FROM pg_locks WHERE locktype = 'advisory'")).toEqual({ v: 0 });
    // `client` is the gateway's table again, not the temporary one that hid it.
    expect(await second.database.prisma.client.count()).toBe(0);
    expect(await databaseState(second.database)).toBe(pristine);
    await second.release();
  });

  it("a table written and emptied again, or vacuumed, is truncated: its pages and row estimate are a new copy's", async () => {
    const first = await lease();
    const rows = fixtures(first.database);
    await rows.client();
    await first.database.sql.query("DELETE FROM client", []);
    await first.database.sql.script("VACUUM gateway_instance");
    expect(await one(first, "SELECT reltuples AS v FROM pg_class WHERE relname = 'gateway_instance'")).toEqual({
      v: 0,
    });
    const second = await reusedAfter(first);
    expect(await one(second, "SELECT pg_relation_size('client')::int AS v")).toEqual({ v: 0 });
    expect(await one(second, "SELECT reltuples AS v FROM pg_class WHERE relname = 'gateway_instance'")).toEqual({
      v: -1,
    });
    expect(await databaseState(second.database)).toBe(pristine);
    await second.release();
  });

  it("a database analysed with rows, its gateway tables vacuumed, comes back as a new copy and is reused", async () => {
    const first = await lease();
    const rows = fixtures(first.database);
    const client = await rows.client();
    await rows.delivery({ subscriptionId: await rows.subscription(client), clientId: client });
    await first.database.sql.script("ANALYZE client; ANALYZE subscription; ANALYZE delivery;");
    const gatewayTables = await first.database.sql.query<{ name: string }>(
      `SELECT format('%I', relname) AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace
       AND relname NOT IN ('station', 'station_data_version', '_prisma_migrations')`,
      [],
    );
    expect(gatewayTables.length).toBeGreaterThan(15);
    for (const { name } of gatewayTables) await first.database.sql.script(`VACUUM ${name}`);
    const second = await reusedAfter(first);
    expect(await databaseState(second.database)).toBe(pristine);
    await second.release();
  });

  it.each([
    [
      "one of its bundled stations changed",
      "UPDATE station SET name = name || ' (changed)' WHERE ctid IN (SELECT ctid FROM station LIMIT 1)",
    ],
    ["one of its bundled stations deleted", "DELETE FROM station WHERE ctid IN (SELECT ctid FROM station LIMIT 1)"],
    ["a table added", "CREATE TABLE scratch (id int)"],
    ["a column's default changed", "ALTER TABLE client ALTER COLUMN max_subscriptions SET DEFAULT 7"],
    ["a constraint added", "ALTER TABLE client ADD CONSTRAINT named CHECK (name <> '')"],
    ["an index added", "CREATE INDEX client_name ON client (name)"],
    ["a view added", "CREATE VIEW named AS SELECT name FROM client"],
    ["a function added", "CREATE FUNCTION answer() RETURNS int LANGUAGE sql AS 'SELECT 42'"],
    [
      "a trigger added (on a function of PostgreSQL's own)",
      "CREATE TRIGGER unchanged BEFORE UPDATE ON client FOR EACH ROW EXECUTE FUNCTION suppress_redundant_updates_trigger()",
    ],
    ["its foreign keys' triggers turned off", "ALTER TABLE delivery DISABLE TRIGGER ALL"],
    ["a sequence's step changed", "ALTER SEQUENCE status_event_seq_seq INCREMENT BY 10"],
    ["a database setting made", "ALTER DATABASE template1 SET work_mem = '1MB'"],
    ["a role added", "CREATE ROLE somebody"],
    ["a cast added", "CREATE CAST (text AS integer) WITH INOUT AS IMPLICIT"],
    ["an operator added", "CREATE OPERATOR public.+ (leftarg = text, rightarg = text, function = pg_catalog.textcat)"],
    ["a comment made", "COMMENT ON TABLE client IS 'changed'"],
    ["a table's privileges changed", "REVOKE SELECT ON client FROM PUBLIC; GRANT SELECT ON client TO PUBLIC"],
    ["a statistics object added", "CREATE STATISTICS client_stats ON name, max_subscriptions FROM client"],
  ])("its digest sees %s", async (_what, change) => {
    // Inside a transaction rolled back after: the database goes back to the pool unchanged, where a
    // change that stayed would cost a new database (the next test shows that one that stays does).
    const leased = await lease();
    const before = await databaseState(leased.database);
    await leased.database.sql.script(`BEGIN; ${change}`);
    try {
      expect(await databaseState(leased.database)).not.toBe(before);
    } finally {
      await leased.database.sql.script("ROLLBACK");
    }
    expect(await databaseState(leased.database)).toBe(before);
    await reusedAfter(leased).then((next) => next.release());
  });

  it("a database that differs from its digest when given back is not handed out again", async () => {
    const changed = await lease();
    await changed.database.sql.script(
      "UPDATE station SET name = name || ' (changed)' WHERE ctid IN (SELECT ctid FROM station LIMIT 1)",
    );
    const differed = poolCounts.differed;
    await changed.release();
    expect(poolCounts.differed).toBe(differed + 1);
    expect(existsSync(changed.dir)).toBe(false);
    const next = await lease();
    expect(await databaseState(next.database)).toBe(pristine);
    await next.release();
  });

  it("a database whose settings file was rewritten (ALTER SYSTEM) is not handed out again", async () => {
    const changed = await lease();
    await changed.database.sql.query("ALTER SYSTEM SET work_mem = '1MB'", []);
    const differed = poolCounts.differed;
    await changed.release();
    expect(poolCounts.differed).toBe(differed + 1);
  });

  it("a database left in a transaction, or closed, is not handed out again", async () => {
    for (const leaveIt of [
      (leased: EmbeddedLease) => leased.database.sql.query("BEGIN", []),
      (leased: EmbeddedLease) => leased.database.close(),
    ]) {
      const left = await lease();
      await leaveIt(left);
      const failed = poolCounts.failed;
      await left.release();
      expect(poolCounts.failed).toBe(failed + 1);
      expect(existsSync(left.dir)).toBe(false);
    }
  });

  it("a database given back not to be kept (its gateway failed to stop) is closed and removed", async () => {
    const leased = await lease();
    const notKept = poolCounts.notKept;
    await leased.release({ keep: false });
    expect(poolCounts.notKept).toBe(notKept + 1);
    expect(await leased.database.ping()).toBe(false);
    expect(existsSync(leased.dir)).toBe(false);
  });

  it("keeps at most two idle; closing the pool closes the idle ones at once and a leased one when it comes back", async () => {
    const [a, b, c] = await Promise.all([lease(), lease(), lease()]);
    const notKept = poolCounts.notKept;
    await c.release();
    await b.release();
    await a.release(); // the third idle one
    expect(poolCounts.notKept).toBe(notKept + 1);
    expect(existsSync(a.dir)).toBe(false);

    const leased = await lease();
    const idle = await lease();
    await idle.release();
    await closeEmbeddedPool();
    expect(await idle.database.ping()).toBe(false);
    expect(await leased.database.ping()).toBe(true);
    // A lease after the close opens a new database, kept again when given back; the one leased
    // before the close is not, even given back after it.
    const opened = poolCounts.opened;
    const after = await lease();
    expect(poolCounts.opened).toBe(opened + 1);
    await leased.release();
    expect(await leased.database.ping()).toBe(false);
    expect(existsSync(leased.dir)).toBe(false);
    await reusedAfter(after).then((next) => next.release());
  });

  it("a leased database's folder cannot be opened a second time, as a restart on it would", async () => {
    const leased = await lease();
    await expect(openDatabase({ kind: "pglite", dataDir: leased.dir })).rejects.toThrow(DataDirInUseError);
    await leased.release();
  });

  it("startApp runs its gateway on a leased database, and gives it back once the gateway has stopped", async () => {
    const gateway = new Disposers();
    const leases = poolCounts.opened + poolCounts.reused;
    const { app, env } = await startApp("pglite", gateway);
    expect(poolCounts.opened + poolCounts.reused).toBe(leases + 1);
    expect(await app.database.prisma.client.count()).toBe(1); // the bootstrap client
    await gateway.disposeAll();
    const next = await lease();
    expect(next.dir).toBe(env.DATA_DIR);
    expect(next.database).toBe(app.database);
    expect(await next.database.prisma.client.count()).toBe(0);
    await next.release();
  });

  it("an app built on a leased database serves from it and leaves it open when it stops", async () => {
    const leased = await lease();
    const app = await createApp(
      loadConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
        BOOTSTRAP_API_KEY: ADMIN_KEY,
        DATA_DIR: leased.dir,
      }),
      silentLogger,
      { database: leased.database },
    );
    try {
      const url = await app.listen();
      expect(app.database).toBe(leased.database);
      expect((await getJson(`${url}/healthz`)).status).toBe(200);
      expect(await leased.database.prisma.client.count()).toBe(1); // the bootstrap client
    } finally {
      await app.stop();
    }
    expect(await leased.database.ping()).toBe(true);
    const next = await reusedAfter(leased);
    expect(await next.database.prisma.client.count()).toBe(0);
    await next.release();
  });
});
