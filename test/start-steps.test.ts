import { createHook } from "node:async_hooks";
import { existsSync, readFileSync } from "node:fs";
import { get } from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { connect as amqpConnect } from "amqplib";
import { Client } from "pg";
import pino from "pino";
import { createApp } from "../src/app";
import { START_STEPS, type StartStep } from "../src/composition/build-services";
import { DisposerStack } from "../src/composition/disposer-stack";
import { loadConfig } from "../src/config";
import { ADMIN_KEY, describeBackend, silentLogger } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";
import { until } from "./support/webhooks";

/** Kinds of async resource that hold something open: timers (ref'd or not), sockets, servers. */
const TRACKED = new Set(["Timeout", "Immediate", "TCPWRAP", "TCPSERVERWRAP", "PIPEWRAP", "PIPESERVERWRAP", "UDPWRAP"]);

/**
 * Records every tracked resource created from now on and forgets it when Node destroys it (a timer
 * cleared or fired, a socket or server closed), so an unref'd timer left running counts too.
 */
function trackResources(): { leftOpen(): Promise<string[]> } {
  const open = new Map<number, string>();
  const hook = createHook({
    init(id, type) {
      if (!TRACKED.has(type)) return;
      // Not the gateway's: Jest's own reporter timers (a run in band shares this process) and Node's
      // once-a-second cache of the HTTP Date header.
      const stack = new Error().stack ?? "";
      if (stack.includes("/node_modules/@jest/") || stack.includes("node:internal/http:")) return;
      open.set(id, type);
    },
    destroy(id) {
      open.delete(id);
    },
  }).enable();
  return {
    /** The kinds still open once closing has had up to 2 s to settle (the wait itself is not tracked). */
    async leftOpen() {
      hook.disable();
      const deadline = Date.now() + 2_000;
      while (open.size > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      return [...open.values()].sort();
    },
  };
}

/** A logger that keeps what was logged at error level (a failed close is logged there). */
function recordingLogger(): { log: pino.Logger; errors: string[] } {
  const errors: string[] = [];
  const log = pino({ level: "error" }, { write: (line: string) => void errors.push(line) });
  return { log, errors };
}

const REDIS_URL = "redis://127.0.0.1:6379";
const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";
/** The broker step's queues: this run's own, deleted after. */
const AMQP_QUEUE = `cgw-start-steps-${process.pid}-${Date.now()}`;

async function deleteQueues(): Promise<void> {
  const connection = await amqpConnect(AMQP_URL);
  const channel = await connection.createChannel();
  await channel.deleteQueue(AMQP_QUEUE);
  await channel.deleteQueue(`${AMQP_QUEUE}.dead`);
  await connection.close();
}

describe("DisposerStack", () => {
  it("closes in reverse order, each once, past a failing close, and rejects with the first failure", async () => {
    const { log, errors } = recordingLogger();
    const stack = new DisposerStack(log);
    const closed: string[] = [];
    stack.defer("a", () => void closed.push("a"));
    stack.defer("b", () => {
      closed.push("b");
      throw new Error("b failed");
    });
    stack.defer("c", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      closed.push("c");
    });
    expect(stack.open()).toEqual(["a", "b", "c"]);
    await expect(stack.dispose()).rejects.toThrow("b failed");
    await expect(stack.dispose()).rejects.toThrow("b failed"); // the same outcome, nothing closed twice
    expect(closed).toEqual(["c", "b", "a"]);
    expect(stack.open()).toEqual([]);
    expect(errors.join("")).toContain('"resource":"b"');
  });

  it("waits for what is opened while it disposes, and reports its failure", async () => {
    const stack = new DisposerStack(silentLogger);
    const closed: string[] = [];
    stack.defer("early", () => {
      // A start step finishing under a stop: it defers its resource while the stack is closing.
      stack.defer("late", async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
        closed.push("late");
        throw new Error("late failed");
      });
      closed.push("early");
    });
    await expect(stack.dispose()).rejects.toThrow("late failed");
    expect(closed).toEqual(["early", "late"]);
  });

  it("closes at once what is opened after disposal began", async () => {
    const stack = new DisposerStack(silentLogger);
    await stack.dispose();
    const closed: string[] = [];
    stack.defer("late", () => void closed.push("late"));
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toEqual(["late"]);
  });
});

describeBackend("pglite")(
  "a start that fails at any step closes what it opened (embedded database, Redis, worker, broker)",
  () => {
    let dataDir: string;
    beforeAll(async () => {
      dataDir = await mkdtemp(path.join(tmpdir(), "gw-start-steps-"));
      // Migrate the folder once: the schema engine (loaded only when a migration is pending) keeps
      // timers of its own runtime for the life of the process, whatever the gateway closes.
      const app = await createApp(loadConfig(env()), silentLogger);
      await app.stop();
    });
    afterAll(async () => {
      await rm(dataDir, { recursive: true, force: true });
      await deleteQueues();
    });
    const env = () => ({
      PORT: "0",
      HOST: "127.0.0.1",
      LOG_LEVEL: "silent",
      BOOTSTRAP_API_KEY: ADMIN_KEY,
      DATA_DIR: dataDir,
      REDIS_URL,
      AMQP_URL,
      AMQP_QUEUE,
    });

    it.each(START_STEPS)("fails at %s: the data folder's lock, sockets and timers are released", async (step) => {
      const resources = trackResources();
      const { log, errors } = recordingLogger();
      const failure = new Error(`injected failure at ${step}`);
      const seen: StartStep[] = [];
      await expect(
        createApp(loadConfig(env()), log, {
          beforeStep: (at) => {
            seen.push(at);
            if (at === step) throw failure;
          },
        }),
      ).rejects.toBe(failure);
      expect(seen).toEqual(START_STEPS.slice(0, START_STEPS.indexOf(step) + 1));
      expect(existsSync(path.join(dataDir, "gateway.lock"))).toBe(false);
      expect(await resources.leftOpen()).toEqual([]);
      expect(errors).toEqual([]); // every close succeeded
    });

    it("a port in use fails listen; stop then releases everything the start opened", async () => {
      const blocker: Server = createServer();
      await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
      const port = (blocker.address() as { port: number }).port;
      const resources = trackResources();
      try {
        const app = await createApp(loadConfig({ ...env(), PORT: String(port) }), silentLogger);
        expect(existsSync(path.join(dataDir, "gateway.lock"))).toBe(true);
        await expect(app.listen()).rejects.toMatchObject({ code: "EADDRINUSE" });
        await app.stop();
        expect(existsSync(path.join(dataDir, "gateway.lock"))).toBe(false);
        expect(await resources.leftOpen()).toEqual([]);
      } finally {
        blocker.close();
      }
    });

    it("after every failed start the same folder starts, serves with Redis up and the broker consumed, and stops with nothing left open", async () => {
      const resources = trackResources();
      const app = await createApp(loadConfig(env()), silentLogger);
      expect(app.database.appliedMigrations).toEqual([]);
      // The embedded database's cache is set as a start parameter; initdb's postgresql.conf stays.
      expect(await app.database.sql.query("SHOW shared_buffers", [])).toEqual([{ shared_buffers: "64MB" }]);
      expect(readFileSync(path.join(dataDir, "postgresql.conf"), "utf8")).toMatch(/^timezone\s*=/m);
      await app.listen();
      await until(async () => (await app.services.health.readiness()).redis === "up", { what: "Redis connected" });
      expect((await app.services.health.readiness()).broker).toBe("consuming");
      // Through the server, on a connection of its own that closes (no kept-alive client socket).
      const readyz = await new Promise<number>((resolve, reject) =>
        get(`${app.url()}/readyz`, { agent: false }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        }).on("error", reject),
      );
      expect(readyz).toBe(200);
      await app.stop();
      expect(await resources.leftOpen()).toEqual([]);
    });
  },
);

describeBackend("postgres")("a start that fails at any step closes its PostgreSQL connections", () => {
  let database: { url: string; drop: () => Promise<void> };
  let admin: Client;
  beforeAll(async () => {
    database = await createPostgresDatabase();
    admin = new Client({ connectionString: database.url });
    await admin.connect();
    // Migrated once here, as for the embedded database: the schema engine's runtime timers are its own.
    const app = await createApp(
      loadConfig({ PORT: "0", LOG_LEVEL: "silent", BOOTSTRAP_API_KEY: ADMIN_KEY, DATABASE_URL: database.url }),
      silentLogger,
    );
    await app.stop();
  });
  afterAll(async () => {
    await admin?.end();
    await database?.drop();
    await deleteQueues();
  });
  /** Connections to the test's database other than this test's own. */
  const gatewayConnections = async () => {
    const { rows } = await admin.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()",
    );
    return rows[0]!.n;
  };

  it("a started instance is recorded in gateway_instance, and its stop removes the row", async () => {
    const instances = async () =>
      (await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM gateway_instance")).rows[0]!.n;
    const app = await createApp(
      loadConfig({ PORT: "0", LOG_LEVEL: "silent", BOOTSTRAP_API_KEY: ADMIN_KEY, DATABASE_URL: database.url }),
      silentLogger,
    );
    expect(await instances()).toBe(1);
    await app.stop();
    expect(await instances()).toBe(0);
  });

  it.each(START_STEPS.filter((step) => step !== "database"))(
    "fails at %s: no connection to the database stays open (pool, LISTEN)",
    async (step) => {
      const failure = new Error(`injected failure at ${step}`);
      const config = loadConfig({
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "silent",
        BOOTSTRAP_API_KEY: ADMIN_KEY,
        DATABASE_URL: database.url,
        REDIS_URL,
        AMQP_URL,
        AMQP_QUEUE,
      });
      await expect(
        createApp(config, silentLogger, {
          beforeStep: (at) => {
            if (at === step) throw failure;
          },
        }),
      ).rejects.toBe(failure);
      // The instance recorded at the "instances" step is removed again.
      expect((await admin.query("SELECT id FROM gateway_instance")).rows).toEqual([]);
      // The server may report a closed backend for a moment after the client has gone.
      const deadline = Date.now() + 5_000;
      while ((await gatewayConnections()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(await gatewayConnections()).toBe(0);
    },
  );
});
