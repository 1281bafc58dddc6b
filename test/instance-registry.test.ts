import { readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "pg";
import pino from "pino";
import { createApp } from "../src/app";
import { SHARED_SETTINGS } from "../src/composition/shared-settings";
import { loadConfig } from "../src/config";
import { openDatabase } from "../src/db/database";
import { registerInstance, type SharedSettings } from "../src/db/instance-registry";
import { CliError } from "../src/errors";
import { describeBackend, Disposers, silentLogger, startApp } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";
import { until } from "./support/webhooks";
import { MAIN_JS } from "./support/process";
import { refusedStart, spawnWorker, WORKER_JS } from "./support/worker-process";
import { itInFullSuite } from "./support/suite";

const REPO = path.resolve(__dirname, "..");
const KEY_A = Buffer.alloc(32, 1).toString("base64");
const KEY_B = Buffer.alloc(32, 2).toString("base64");

/** The names of the settings a refusal's message says differ. */
function namedIn(message: string): string[] {
  return SHARED_SETTINGS.map((s) => s.name).filter((name) => new RegExp(`\\b${name}\\b`).test(message));
}

async function startRefusal(env: Record<string, string>): Promise<string> {
  try {
    const app = await createApp(loadConfig(env), silentLogger);
    await app.stop();
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    return (error as Error).message;
  }
  throw new Error("the start was not refused");
}

describeBackend("postgres")("instances on one PostgreSQL database must share their settings", () => {
  const disposers = new Disposers();
  let admin: Client;
  let databaseUrl: string;
  beforeAll(async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    databaseUrl = database.url;
    admin = new Client({ connectionString: databaseUrl });
    await admin.connect();
    disposers.add(() => admin.end());
  });
  afterAll(() => disposers.disposeAll());
  const rows = async () =>
    (await admin.query<{ kind: string; pid: number }>("SELECT kind, pid FROM gateway_instance ORDER BY started_at"))
      .rows;

  it("two instances with the same settings start; a third with another AWB_CHECK_DIGIT is refused naming it alone; once they stop, it starts", async () => {
    const settings = { DATABASE_URL: databaseUrl, SECRETS_KEY: KEY_A };
    const own = new Disposers();
    const first = await startApp("postgres", own, settings);
    await startApp("postgres", own, settings);
    expect(await rows()).toEqual([
      { kind: "gateway", pid: process.pid },
      { kind: "gateway", pid: process.pid },
    ]);

    const message = await startRefusal({ ...first.env, AWB_CHECK_DIGIT: "enforce" });
    // The same through the gateway's entry point: exit 1, that one line on standard error.
    const gateway = await refusedStart(MAIN_JS, { ...first.env, LOG_LEVEL: "info", AWB_CHECK_DIGIT: "enforce" });
    expect([gateway.code, gateway.stderr.trim().split("\n")]).toEqual([
      1,
      [expect.stringContaining(message.slice(0, 60))],
    ]);
    expect(gateway.stderr).toContain('AWB_CHECK_DIGIT is "enforce" here, "off" there');
    expect(message).toContain('AWB_CHECK_DIGIT is "enforce" here, "off" there');
    expect(namedIn(message)).toEqual(["AWB_CHECK_DIGIT"]);
    expect(message).toContain('docs/DEPLOYMENT.md, "What every instance must share"');
    expect(message).not.toContain("\n");
    expect(await rows()).toHaveLength(2); // the refused start registered nothing, and left no row behind

    await own.disposeAll(); // a clean stop removes each instance's row
    expect(await rows()).toEqual([]);
    const third = await createApp(loadConfig({ ...first.env, AWB_CHECK_DIGIT: "enforce" }), silentLogger);
    expect(await rows()).toHaveLength(1);
    await third.stop();
    expect(await rows()).toEqual([]);
  });

  it("names every setting that differs, and a SECRETS_KEY without showing the key or its digest", async () => {
    const own = new Disposers();
    const first = await startApp("postgres", own, { DATABASE_URL: databaseUrl, SECRETS_KEY: KEY_A });
    const message = await startRefusal({
      ...first.env,
      SECRETS_KEY: KEY_B,
      CARRIER_SEGMENT: "acme",
      RATE_LIMIT_BURST: "999",
    });
    expect(namedIn(message).sort()).toEqual(["CARRIER_SEGMENT", "RATE_LIMIT_BURST", "SECRETS_KEY"]);
    expect(message).toContain("SECRETS_KEY differs (not shown)");
    expect(message).toContain('CARRIER_SEGMENT is "acme" here, "carrier" there');
    const [{ settings }] = (await admin.query<{ settings: SharedSettings }>("SELECT settings FROM gateway_instance"))
      .rows as [{ settings: SharedSettings }];
    for (const text of [message, JSON.stringify(settings)]) {
      expect(text).not.toContain(KEY_A);
      expect(text).not.toContain(KEY_B);
      expect(text).not.toContain(Buffer.alloc(32, 1).toString("hex"));
    }
    expect(message).not.toContain((settings.SECRETS_KEY as { digest: string }).digest);
    await own.disposeAll();
  });

  itInFullSuite(
    "a worker process compares what a worker uses: another CARRIER_SEGMENT starts, another ALLOW_PRIVATE_CALLBACKS exits 1 naming it",
    async () => {
      const own = new Disposers();
      disposers.add(() => own.disposeAll());
      const { env } = await startApp("postgres", own, { DATABASE_URL: databaseUrl, SECRETS_KEY: KEY_A });
      const workerEnv = { DATABASE_URL: databaseUrl, SECRETS_KEY: KEY_A, ALLOW_PRIVATE_CALLBACKS: "true" };
      const worker = await spawnWorker({ ...workerEnv, CARRIER_SEGMENT: "not-the-gateways" });
      own.add(async () => {
        worker.child.kill("SIGTERM");
        await worker.exited;
      });
      expect(env.ALLOW_PRIVATE_CALLBACKS).toBe("true");
      expect((await rows()).map((row) => row.kind)).toEqual(["gateway", "worker"]);

      const refused = await refusedStart(WORKER_JS, { ...workerEnv, ALLOW_PRIVATE_CALLBACKS: "false" });
      expect(refused.code).toBe(1);
      const lines = refused.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(namedIn(lines[0]!)).toEqual(["ALLOW_PRIVATE_CALLBACKS"]);
      expect(lines[0]).toContain('ALLOW_PRIVATE_CALLBACKS is "false" here, "true" there');
      expect(lines[0]).toMatch(/gateway pid \d+ on .+; worker pid \d+ on /);
      await own.disposeAll();
      expect(await rows()).toEqual([]);
    },
    60_000,
  );

  describe("the registry itself", () => {
    let database: Awaited<ReturnType<typeof openDatabase>>;
    beforeAll(async () => {
      database = await openDatabase({ kind: "postgres", url: databaseUrl });
    });
    afterAll(() => database.close());
    const settings = (check: string): SharedSettings => ({ AWB_CHECK_DIGIT: { value: check } });

    it("registers one of two instances that start at the same moment with different settings", async () => {
      const attempts = await Promise.allSettled(
        ["off", "enforce", "off", "enforce"].map((check) =>
          registerInstance(database.sql, { kind: "gateway", settings: settings(check), log: silentLogger }),
        ),
      );
      const registered = attempts.flatMap((a) => (a.status === "fulfilled" ? [a.value] : []));
      const refused = attempts.flatMap((a) => (a.status === "rejected" ? [a.reason as Error] : []));
      expect(registered).toHaveLength(2); // both of one value, none of the other
      expect(refused).toHaveLength(2);
      for (const error of refused) expect(error).toBeInstanceOf(CliError);
      const values = (
        await admin.query<{ value: string }>(
          "SELECT settings->'AWB_CHECK_DIGIT'->>'value' AS value FROM gateway_instance",
        )
      ).rows.map((row) => row.value);
      expect(new Set(values).size).toBe(1);
      await Promise.all(registered.map((instance) => instance.close()));
      expect(await rows()).toEqual([]);
    });

    it("keeps its row fresh, writes it again when it was removed, stops on close, and an instance not heard from in time no longer counts", async () => {
      const timing = { heartbeatMs: 50, aliveForMs: 1_000 };
      const alive = await registerInstance(database.sql, {
        kind: "gateway",
        settings: settings("off"),
        log: silentLogger,
        timing,
      });
      const heartbeat = async () =>
        (
          await admin.query<{ at: Date }>("SELECT heartbeat_at AS at FROM gateway_instance WHERE id = $1", [alive.id])
        ).rows[0]?.at.getTime();
      const before = await heartbeat();
      await until(async () => ((await heartbeat()) ?? 0) > before!, { what: "a heartbeat" });
      await admin.query("DELETE FROM gateway_instance WHERE id = $1", [alive.id]);
      await until(async () => (await heartbeat()) !== undefined, { what: "the row written again" });
      // A clean stop removes the row, and no heartbeat writes it again.
      await alive.close();
      await new Promise((resolve) => setTimeout(resolve, timing.heartbeatMs * 4));
      expect(await heartbeat()).toBeUndefined();
      // As a killed instance leaves it: its row, no longer kept fresh.
      await admin.query(
        "INSERT INTO gateway_instance (id, kind, host, pid, settings, heartbeat_at) VALUES (gen_random_uuid(), 'gateway', 'gone', 1, $1, now() - interval '2 seconds')",
        [JSON.stringify(settings("off"))],
      );
      const later = await registerInstance(database.sql, {
        kind: "gateway",
        settings: settings("enforce"),
        log: silentLogger,
        timing,
      });
      expect((await rows()).map((row) => row.pid)).toEqual([process.pid]); // the stale row was removed
      await later.close();
    });

    it("a heartbeat that finds its row removed compares the settings again: it writes nothing while an instance with another value runs, and registers again once that one is gone", async () => {
      const lines: Array<{ level: number; msg: string }> = [];
      const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      const timing = { heartbeatMs: 50, aliveForMs: 10_000 };
      const cutOff = await registerInstance(database.sql, { kind: "gateway", settings: settings("off"), log, timing });
      const present = async () =>
        (await admin.query("SELECT 1 FROM gateway_instance WHERE id = $1", [cutOff.id])).rows.length > 0;
      // As after being out of reach for longer than aliveForMs: its row deleted as stale by another
      // instance's start, which registered that instance with another value.
      await admin.query(
        `WITH gone AS (DELETE FROM gateway_instance WHERE id = $1)
         INSERT INTO gateway_instance (id, kind, host, pid, settings) VALUES (gen_random_uuid(), 'gateway', 'elsewhere', 1, $2)`,
        [cutOff.id, JSON.stringify(settings("enforce"))],
      );
      await until(async () => lines.some((line) => line.level === 50), { what: "the heartbeat's refusal logged" });
      const refusal = lines.find((line) => line.level === 50)!.msg;
      expect(refusal).toContain('AWB_CHECK_DIGIT is "off" here, "enforce" there');
      expect(refusal).toContain("gateway pid 1 on elsewhere");
      expect(await present()).toBe(false);

      await admin.query("DELETE FROM gateway_instance WHERE host = 'elsewhere'");
      await until(present, { what: "the row registered again" });
      expect(lines.filter((line) => line.level === 50)).toHaveLength(1); // said once, not at every beat
      await cutOff.close();
      expect(await rows()).toEqual([]);
    });

    it("a stop whose row cannot be removed (the database refuses) still completes", async () => {
      const instance = await registerInstance(database.sql, {
        kind: "gateway",
        settings: settings("off"),
        log: silentLogger,
      });
      await admin.query("ALTER TABLE gateway_instance RENAME TO gateway_instance_away");
      try {
        await expect(instance.close()).resolves.toBeUndefined();
      } finally {
        await admin.query("ALTER TABLE gateway_instance_away RENAME TO gateway_instance");
      }
      await admin.query("DELETE FROM gateway_instance");
    });
  });
});

describeBackend("pglite")("the embedded database", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("registers no instance: one process owns it (the data folder's lock), so there is nothing to compare", async () => {
    const { app } = await startApp("pglite", disposers);
    expect(await app.database.sql.query("SELECT * FROM gateway_instance", [])).toEqual([]);
  });
});

describe("docs/DEPLOYMENT.md", () => {
  /** The backquoted setting names in the first column of the table under a heading. */
  const tableNames = (heading: string): string[] => {
    const deployment = readFileSync(path.join(REPO, "docs/DEPLOYMENT.md"), "utf8");
    const start = deployment.indexOf(`\n${heading}\n`);
    expect(start).toBeGreaterThanOrEqual(0);
    const section = deployment.slice(start + heading.length + 2).split(/\n#{2,3} /)[0]!;
    return section
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...line.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
  };

  it("lists exactly the settings a start compares as the ones every instance must share", () => {
    expect(tableNames("## What every instance must share").sort()).toEqual(SHARED_SETTINGS.map((s) => s.name).sort());
  });

  it("places every setting config.ts reads: shared, or allowed to differ", () => {
    const source = readFileSync(path.join(REPO, "src/config.ts"), "utf8");
    const read = new Set([...source.matchAll(/\(env, "([A-Z][A-Z0-9_]+)"/g)].map((m) => m[1]!));
    expect(read.size).toBeGreaterThan(40);
    const shared = tableNames("## What every instance must share");
    const differ = tableNames("### Settings that may differ");
    expect(shared.filter((name) => differ.includes(name))).toEqual([]);
    expect([...read].filter((name) => !shared.includes(name) && !differ.includes(name))).toEqual([]);
  });
});
