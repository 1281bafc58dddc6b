import { randomUUID } from "node:crypto";
import { Client } from "pg";
import type { Database } from "../src/db/database";
import { advisoryXactLock, LOCK_KEYS } from "../src/db/sql/advisory-xact-lock.sql";
import { analyze } from "../src/db/sql/analyze.sql";
import { checkpoint } from "../src/db/sql/checkpoint.sql";
import { instanceHeartbeat } from "../src/db/sql/instance-heartbeat.sql";
import { listen } from "../src/db/sql/listen.sql";
import { registerInstance } from "../src/db/sql/register-instance.sql";
import { removeInstance } from "../src/db/sql/remove-instance.sql";
import { staleStatistics } from "../src/db/sql/stale-statistics.sql";
import { BACKENDS, describeBackend, Disposers } from "./support/harness";
import { emptyTables, openTestDatabase } from "./support/test-database";
import { until } from "./support/webhooks";

/** Each statement of db/sql/ on its own, on both databases. */
describe.each(BACKENDS)("database statements on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let db: Database;
    let url: string | undefined;
    beforeAll(async () => {
      ({ database: db, url } = await openTestDatabase(backend, disposers));
    });
    afterAll(() => disposers.disposeAll());
    beforeEach(() => emptyTables(db));

    it("advisory-xact-lock holds the advisory lock of its key until the transaction ends; every use has a key of its own", async () => {
      expect(new Set(Object.values(LOCK_KEYS)).size).toBe(Object.keys(LOCK_KEYS).length);
      const key = LOCK_KEYS.stationImport;
      const held = () =>
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ${key} AND granted`;
      const during = await db.prisma.$transaction(async (tx) => {
        await advisoryXactLock.affectedRows(tx, { key });
        return tx.$queryRawUnsafe<Array<{ n: number }>>(held());
      });
      expect(during).toEqual([{ n: 1 }]);
      expect(await db.sql.query(held(), [])).toEqual([{ n: 0 }]);
    });

    const settings = (values: Record<string, string>) =>
      JSON.stringify(Object.fromEntries(Object.entries(values).map(([name, value]) => [name, { value }])));
    const register = (id: string, values: Record<string, string>) =>
      registerInstance.run(db.sql, {
        id,
        kind: "gateway",
        host: "here",
        pid: 4121,
        settings: settings(values),
        aliveForMs: 30_000,
      });
    const insertOther = (values: Record<string, string>, silentMs: number, host = "elsewhere") =>
      db.sql.query(
        `INSERT INTO gateway_instance (id, kind, host, pid, settings, heartbeat_at)
         VALUES (gen_random_uuid(), 'worker', $1, 7, $2::jsonb, now() - $3::int * interval '1 millisecond')`,
        [host, settings(values), silentMs],
      );

    it("register-instance deletes the stale rows, lists the others, and inserts its row unless a live one holds a shared setting with another value", async () => {
      await insertOther({ AWB_CHECK_DIGIT: "enforce" }, 60_000, "stale");
      await insertOther({ CARRIER_SEGMENT: "other", RATE_LIMIT_BURST: "10" }, 1_000);
      const id = randomUUID();
      const results = await register(id, { AWB_CHECK_DIGIT: "off", RATE_LIMIT_BURST: "10" });
      expect(results[2]).toEqual([
        expect.objectContaining({
          kind: "worker",
          host: "elsewhere",
          pid: 7,
          settings: { CARRIER_SEGMENT: { value: "other" }, RATE_LIMIT_BURST: { value: "10" } },
        }),
      ]);
      expect((results[2]![0] as { silent_s: number }).silent_s).toBeGreaterThanOrEqual(1);
      expect(results[3]).toEqual([{ id }]);
      const rows = await db.sql.query<{ host: string; pid: number; settings: unknown }>(
        "SELECT host, pid, settings FROM gateway_instance ORDER BY host",
        [],
      );
      expect(rows).toEqual([
        expect.objectContaining({ host: "elsewhere" }),
        { host: "here", pid: 4121, settings: { AWB_CHECK_DIGIT: { value: "off" }, RATE_LIMIT_BURST: { value: "10" } } },
      ]);

      const refused = await register(randomUUID(), { AWB_CHECK_DIGIT: "enforce" });
      expect(refused[3]).toEqual([]);
      expect((refused[2] as unknown[]).length).toBe(2);
      expect(await db.sql.query("SELECT 1 FROM gateway_instance", [])).toHaveLength(2);
    });

    it("instance-heartbeat refreshes the row of its id, and answers no row when it was removed; remove-instance removes it", async () => {
      const id = randomUUID();
      await register(id, {});
      await db.sql.query("UPDATE gateway_instance SET heartbeat_at = now() - interval '1 minute'", []);
      expect(await instanceHeartbeat.rows(db.sql, { id })).toEqual([{ id }]);
      const [{ silent }] = (await db.sql.query<{ silent: number }>(
        "SELECT extract(epoch FROM now() - heartbeat_at)::float8 AS silent FROM gateway_instance",
        [],
      )) as [{ silent: number }];
      expect(silent).toBeLessThan(30);
      await removeInstance.rows(db.sql, { id });
      expect(await db.sql.query("SELECT 1 FROM gateway_instance", [])).toEqual([]);
      expect(await instanceHeartbeat.rows(db.sql, { id })).toEqual([]);
    });

    it("checkpoint makes a checkpoint (an explicit one even when nothing was written since the last)", async () => {
      const lsn = async () => {
        const [row] = await db.sql.query<{ lsn: string }>(
          "SELECT checkpoint_lsn::text AS lsn FROM pg_control_checkpoint()",
          [],
        );
        return row!.lsn;
      };
      const before = await lsn();
      await checkpoint.affectedRows(db.prisma, {});
      expect(await lsn()).not.toBe(before);
    });

    if (backend === "pglite")
      it("stale-statistics names nothing on the embedded database, which keeps no statistics; analyze runs there", async () => {
        // Its upkeep vacuums by rows written instead.
        await db.sql.script("DROP TABLE IF EXISTS stats_probe; CREATE TABLE stats_probe (n int)");
        try {
          await db.sql.query("INSERT INTO stats_probe SELECT generate_series(1, 100)", []);
          expect(await staleStatistics.rows(db.sql, { tables: ["stats_probe"], slack: 10 })).toEqual([]);
          expect(await analyze(["stats_probe"]).affectedRows(db.prisma, {})).toBe(0);
        } finally {
          await db.sql.script("DROP TABLE stats_probe");
        }
      });

    if (backend === "postgres")
      it("stale-statistics names a table changed by more rows than it had when last analysed, plus the slack; analyze makes it current", async () => {
        await db.sql.script("DROP TABLE IF EXISTS stats_probe; CREATE TABLE stats_probe (n int)");
        try {
          const stale = async () =>
            (await staleStatistics.rows(db.sql, { tables: ["stats_probe"], slack: 10 })).map((t) => t.name);
          // Rows written reach the server's statistics when their connection flushes them: force it.
          const writer = new Client({ connectionString: url });
          await writer.connect();
          const insert = async (rows: number) => {
            await writer.query(`INSERT INTO stats_probe SELECT generate_series(1, ${rows})`);
            await writer.query("SELECT pg_stat_force_next_flush()");
            await writer.query("SELECT 1"); // the flush happens once the connection is idle after the last
          };
          try {
            await insert(5);
            expect(await stale()).toEqual([]); // never analysed, 5 changed: not more than 0 + 10
            await insert(25);
            await until(async () => (await stale()).length > 0, { what: "30 changed rows counted" });
            expect(await stale()).toEqual(["stats_probe"]); // never analysed: 30 > 0 + 10
            await analyze(["stats_probe"]).affectedRows(db.prisma, {});
            expect(await stale()).toEqual([]);
            await insert(35);
            expect(await stale()).toEqual([]); // 35 changed since it counted 30: not more than 30 + 10
            await insert(10);
            await until(async () => (await stale()).length > 0, { what: "45 changed rows counted" });
            expect(await stale()).toEqual(["stats_probe"]); // 45 > 30 + 10
            // A role that does not own the table may not analyse it: never named.
            const role = `cgw_not_owner_${randomUUID().slice(0, 8)}`;
            await writer.query(`CREATE ROLE ${role}`);
            try {
              await writer.query(`SET ROLE ${role}`);
              const asOther = await writer.query(
                staleStatistics.text,
                staleStatistics.values({ tables: ["stats_probe"], slack: 10 }),
              );
              await writer.query("RESET ROLE");
              expect(asOther.rows).toEqual([]);
            } finally {
              await writer.query("RESET ROLE");
              await writer.query(`DROP ROLE ${role}`);
            }
            // A table another session holds a conflicting lock on is skipped, not waited for: this
            // ANALYZE returns while the lock is still held (one that waited would fail on lock_timeout).
            await writer.query("BEGIN");
            await writer.query("LOCK TABLE stats_probe IN SHARE UPDATE EXCLUSIVE MODE");
            const analyser = new Client({ connectionString: url });
            await analyser.connect();
            try {
              await analyser.query("SET lock_timeout = '5s'");
              await analyser.query(analyze(["stats_probe"]).text);
            } finally {
              await analyser.end();
              await writer.query("COMMIT");
            }
            expect(await stale()).toEqual(["stats_probe"]); // skipped: still stale
          } finally {
            await writer.end();
          }
        } finally {
          await db.sql.script("DROP TABLE stats_probe");
        }
      });

    it("listen quotes its channel's name exactly, valid SQL on either database", async () => {
      expect(listen('cgw_Test "channel"').text).toBe('LISTEN "cgw_Test ""channel"""');
      await db.sql.script(listen("cgw_deliveries").text);
    });

    if (backend === "postgres")
      it("listen subscribes to the channel of exactly its name", async () => {
        const listener = new Client({ connectionString: url });
        await listener.connect();
        try {
          const heard = new Promise<string>((resolve) => listener.on("notification", (n) => resolve(n.channel)));
          await listener.query(listen("cgw_Test").text);
          await db.sql.query("SELECT pg_notify('cgw_test', ''), pg_notify('cgw_Test', '')", []);
          expect(await heard).toBe("cgw_Test");
        } finally {
          await listener.end();
        }
      });
  });
});
