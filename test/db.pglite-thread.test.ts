import { spawn, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { openDatabase } from "../src/db/database";
import { embeddedTemplatePath } from "../src/db/embedded-template-path";
import { EmbeddedDatabaseStopped, startPGliteThread } from "../src/db/pglite-remote";
import { pgliteDump } from "./support/database-templates";
import { itInFullSuite } from "./support/suite";

const DIST_DB = path.join(__dirname, "..", "dist", "src", "db");

/**
 * The embedded database on its own thread (src/db/pglite-remote.ts, pglite-thread.ts): what the
 * gateway asks of it arrives as it would in-process — rows, Prisma's errors, PostgreSQL's error
 * fields, transactions that commit or roll back — and a thread that dies, or a process killed,
 * loses nothing that had committed.
 */
describe("the embedded database's thread", () => {
  const folders: string[] = [];
  const newFolder = () => {
    const folder = mkdtempSync(path.join(tmpdir(), "cgw-pglite-thread-"));
    folders.push(folder);
    return folder;
  };
  afterAll(() => {
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it("answers raw SQL and Prisma as in-process: rows with their types, errors with their codes, transactions that commit or roll back", async () => {
    // The migrated template's contents (as the tests' gateways start): initdb and the migrations cost seconds.
    const db = await openDatabase({ kind: "pglite", dataDir: "memory://", dump: pgliteDump() });
    try {
      const [row] = await db.sql.query<{ at: Date; n: number; list: string[]; doc: { a: number } }>(
        "SELECT now() AS at, 7::bigint AS n, ARRAY['x','y'] AS list, '{\"a\":1}'::jsonb AS doc",
        [],
      );
      expect(row!.at).toBeInstanceOf(Date);
      expect(row).toMatchObject({ n: 7, list: ["x", "y"], doc: { a: 1 } });
      expect(await db.sql.script("SELECT 1 AS a; SELECT 2 AS b")).toEqual([[{ a: 1 }], [{ b: 2 }]]);

      const client = await db.prisma.client.create({
        data: { name: "t", callbackPrefixes: ["*"], signingSecret: "s" },
      });
      expect(client.createdAt).toBeInstanceOf(Date);
      // PostgreSQL's error, its fields kept (the code callers branch on).
      const duplicate = await db.sql
        .query("INSERT INTO client (id, name, callback_prefixes, signing_secret) VALUES ($1::uuid, 't', '{}', 's')", [
          client.id,
        ])
        .catch((error: unknown) => error);
      expect(duplicate).toMatchObject({ code: "23505" });
      // Prisma's, mapped from the adapter's as in-process.
      await expect(
        db.prisma.client.create({ data: { id: client.id, name: "t", callbackPrefixes: [], signingSecret: "s" } }),
      ).rejects.toMatchObject({ code: "P2002" });

      // An interactive transaction: rolled back on a throw, committed otherwise.
      await expect(
        db.prisma.$transaction(async (tx) => {
          await tx.client.update({ where: { id: client.id }, data: { name: "rolled back" } });
          throw new Error("undo");
        }),
      ).rejects.toThrow("undo");
      await db.prisma.$transaction(async (tx) => {
        await tx.client.update({ where: { id: client.id }, data: { name: "committed" } });
      });
      expect((await db.prisma.client.findUniqueOrThrow({ where: { id: client.id } })).name).toBe("committed");
    } finally {
      await db.close();
    }
  });

  it("a thread that dies fails every request waiting and every later one, says so once, and loses nothing committed", async () => {
    const dataDir = newFolder();
    cpSync(embeddedTemplatePath(), dataDir, { recursive: true }); // a database folder without initdb's cost
    const stopped: Error[] = [];
    const remote = startPGliteThread({ dataDir, dump: undefined, startParams: [] }, (error) => stopped.push(error));
    await remote.sql.query("CREATE TABLE kept (n int)", []);
    await remote.sql.query("INSERT INTO kept SELECT generate_series(1, 100)", []);
    const waiting = remote.sql.query("SELECT pg_sleep(5)", []);
    await remote.thread.terminate(); // as a crash of the thread would end it
    await expect(waiting).rejects.toBeInstanceOf(EmbeddedDatabaseStopped);
    await expect(remote.sql.query("SELECT 1", [])).rejects.toBeInstanceOf(EmbeddedDatabaseStopped);
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.message).toContain("thread stopped");

    const reopened = startPGliteThread({ dataDir, dump: undefined, startParams: [] });
    try {
      expect(await reopened.sql.query("SELECT count(*)::int AS n FROM kept", [])).toEqual([{ n: 100 }]);
    } finally {
      await reopened.close();
    }
  });

  it("a request that waits past the stuck deadline ends the thread as stuck; a value that cannot cross fails alone", async () => {
    const stopped: Error[] = [];
    const remote = startPGliteThread(
      { dataDir: "memory://", dump: pgliteDump(), startParams: [] },
      (error) => stopped.push(error),
      { stuckAfterMs: 5_000 }, // far above a loaded machine's answer to SELECT 1, far below pg_sleep(30)
    );
    // A function cannot be sent to the thread: that request fails, the next one is answered.
    await expect(remote.sql.query("SELECT $1", [() => 1])).rejects.toThrow();
    expect(await remote.sql.query("SELECT 1 AS one", [])).toEqual([{ one: 1 }]);
    const stuck = remote.sql.query("SELECT pg_sleep(30)", []);
    await expect(stuck).rejects.toThrow("taken as stuck");
    await expect(stuck).rejects.toMatchObject({ code: "57P01" });
    expect(stopped.map((error) => error.message)).toEqual([expect.stringContaining("taken as stuck")]);
    await expect(remote.sql.query("SELECT 1", [])).rejects.toBeInstanceOf(EmbeddedDatabaseStopped);
  });

  itInFullSuite(
    "in a gateway's process, a thread that dies ends the process with a non-zero code, naming the database",
    () => {
      const script = `
      const { startPGliteThread } = require(${JSON.stringify(path.join(DIST_DB, "pglite-remote.js"))});
      const remote = startPGliteThread({ dataDir: "memory://", dump: undefined, startParams: [] });
      remote.sql.query("SELECT 1", []).then(() => remote.thread.terminate());
      setInterval(() => {}, 1000); // a process with work to do: only the failure ends it
    `;
      const run = spawnSync(process.execPath, ["-e", script], { encoding: "utf8", timeout: 60_000 });
      expect(run.status).not.toBe(0);
      expect(run.status).not.toBeNull();
      expect(run.stderr).toContain("EmbeddedDatabaseStopped");
    },
  );

  itInFullSuite(
    "a process killed (SIGKILL) right after its commits loses none of them",
    async () => {
      const dataDir = newFolder();
      const script = `
      const { openDatabase } = require(${JSON.stringify(path.join(DIST_DB, "database.js"))});
      (async () => {
        const db = await openDatabase({ kind: "pglite", dataDir: ${JSON.stringify(dataDir)} });
        await db.sql.query("CREATE TABLE kept (n int)", []);
        for (let i = 1; i <= 50; i++) await db.sql.query("INSERT INTO kept VALUES ($1)", [i]);
        process.stdout.write("committed\\n");
        setInterval(() => {}, 1000);
      })();
    `;
      const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("committed")) resolve();
        });
        child.on("exit", (code) => reject(new Error(`exited ${code} before committing`)));
      });
      const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve(signal)));
      child.kill("SIGKILL");
      expect(await exited).toBe("SIGKILL");

      const db = await openDatabase({ kind: "pglite", dataDir });
      try {
        expect(await db.sql.query("SELECT count(*)::int AS n, max(n) AS top FROM kept", [])).toEqual([
          { n: 50, top: 50 },
        ]);
      } finally {
        await db.close();
      }
    },
    120_000,
  );
});
