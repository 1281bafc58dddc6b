/**
 * The test files' pool of open embedded databases (test/support/embedded-pool.ts): a database given
 * back is, for the next test file, what a new copy of the build's template is — or is not handed out
 * again.
 */
import { writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import path from "node:path";
import { createApp } from "../src/app";
import { loadConfig } from "../src/config";
import { DataDirInUseError } from "../src/db/data-dir-lock";
import { openDatabase } from "../src/db/database";
import { newEmbeddedDataDir } from "./support/embedded-data-dirs";
import { databaseState, type EmbeddedLease, leaseEmbeddedDatabase, poolCounts } from "./support/embedded-pool";
import { ADMIN_KEY, Disposers, silentLogger } from "./support/harness";
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

  it("a database given back is handed out again holding exactly what a new copy holds", async () => {
    const first = await lease();
    expect(await databaseState(first.database)).toBe(pristine);
    const rows = fixtures(first.database);
    const client = await rows.client();
    await rows.delivery({ subscriptionId: await rows.subscription(client), clientId: client });
    await first.database.sql.query("SET statement_timeout = 1234", []);
    await writeFile(path.join(first.dir, "secrets.key"), "an app's key file");
    expect(await databaseState(first.database)).not.toBe(pristine);
    await first.release();

    const reused = poolCounts.reused;
    const second = await lease();
    expect(poolCounts.reused).toBe(reused + 1);
    expect(second.dir).toBe(first.dir);
    // Rows gone, sequences back at their start, the session's settings and the app's files gone.
    expect(await databaseState(second.database)).toBe(pristine);
    expect(await second.database.prisma.client.count()).toBe(0);
    const [setting] = await second.database.sql.query<{ timeout: string }>(
      "SELECT current_setting('statement_timeout') AS timeout",
      [],
    );
    expect(setting?.timeout).toBe("0");
    expect(existsSync(path.join(second.dir, "secrets.key"))).toBe(false);
    const event = await second.database.prisma.statusEvent.findUniqueOrThrow({
      where: { id: await fixtures(second.database).event() },
    });
    expect(event.seq).toBe(1n);
    await second.release();
  });

  it.each([
    [
      "its bundled stations changed",
      "UPDATE station SET name = name || ' (changed)' WHERE ctid IN (SELECT ctid FROM station LIMIT 1)",
    ],
    ["a table added", "CREATE TABLE scratch (id int)"],
    ["a column's default changed", "ALTER TABLE client ALTER COLUMN max_subscriptions SET DEFAULT 7"],
    [
      "a trigger added",
      `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'no'; END $$;
       CREATE TRIGGER refuse BEFORE INSERT ON client FOR EACH ROW EXECUTE FUNCTION refuse();`,
    ],
  ])("a database is not handed out again once %s", async (_what, change) => {
    const changed = await lease();
    await changed.database.sql.script(change);
    const discarded = poolCounts.discarded;
    await changed.release();
    expect(poolCounts.discarded).toBe(discarded + 1);
    expect(existsSync(changed.dir)).toBe(false);
    const next = await lease();
    expect(next.dir).not.toBe(changed.dir);
    expect(await databaseState(next.database)).toBe(pristine);
    await next.release();
  });

  it("a database its test closed is not handed out again", async () => {
    const closed = await lease();
    await closed.database.close();
    const discarded = poolCounts.discarded;
    await closed.release();
    expect(poolCounts.discarded).toBe(discarded + 1);
    const next = await lease();
    expect(next.dir).not.toBe(closed.dir);
    expect(await next.database.ping()).toBe(true);
    await next.release();
  });

  it("a leased database's folder cannot be opened a second time (a restart on it fails instead of starting empty)", async () => {
    const leased = await lease();
    await expect(openDatabase({ kind: "pglite", dataDir: leased.dir })).rejects.toThrow(DataDirInUseError);
    await leased.release();
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
    await leased.release();
    expect(await leased.database.prisma.client.count()).toBe(0);
  });
});
