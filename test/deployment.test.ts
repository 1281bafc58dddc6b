/**
 * docs/DEPLOYMENT.md followed on this machine: PostgreSQL, Redis and RabbitMQ, two gateway processes
 * and one worker process from dist/, with the settings the guide's env files prescribe (read from the
 * guide; only addresses, ports, the key and what a receiver on 127.0.0.1 needs are replaced). One
 * milestone goes in through every input and must come out at every output. Needs `npm run build`.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { connect as amqpConnect } from "amqplib";
import { Client } from "pg";
import { describeBackend, Disposers } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";
import { type PrivateService, startPrivateRedis } from "./support/private-services";
import { type ServerProcess, spawnServer } from "./support/process";
import { startReceiver } from "./support/receiver";
import { standardVerifies, until } from "./support/webhooks";
import { spawnWorker, type WorkerProcess } from "./support/worker-process";
import { liveSubscriptions, liveSubscriptionsRunning, openSubscriber } from "./support/ws-protocol";

const REPO = path.resolve(__dirname, "..");
const DEPLOYMENT = readFileSync(path.join(REPO, "docs/DEPLOYMENT.md"), "utf8");
const AMQP_URL = "amqp://guest:guest@127.0.0.1:5672";
const API_KEY = "cgw_deployment-guide-test-key-01";
const SIGNING_SECRET = `whsec_${randomBytes(24).toString("base64")}`;
const AWB = "020-12345675"; // the AWB of docs/examples/
const run = promisify(execFile);

/** The KEY=value lines of the guide's `/etc/cargo-gateway/<name>.env` block. */
function envFile(name: string): Record<string, string> {
  const block = new RegExp("`/etc/cargo-gateway/" + name + "\\.env`[^\\n]*\\n\\n```sh\\n([\\s\\S]*?)```").exec(
    DEPLOYMENT,
  );
  if (!block) throw new Error(`docs/DEPLOYMENT.md has no /etc/cargo-gateway/${name}.env block`);
  const env: Record<string, string> = {};
  for (const line of block[1]!.split("\n")) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (match) env[match[1]!] = match[2]!;
  }
  return env;
}

/** The guide's values with some replaced; each replaced one must be in the guide (nothing added unseen). */
function replaced(guide: Record<string, string>, here: Record<string, string>): Record<string, string> {
  expect(Object.keys(here).filter((key) => !(key in guide))).toEqual([]);
  return { ...guide, ...here };
}

/** A process listening on 0.0.0.0 (HOST as the guide sets it) is reached here on 127.0.0.1. */
const local = (url: string) => url.replace("//0.0.0.0:", "//127.0.0.1:");

const json = (response: Response): Promise<any> => response.json();

describeBackend("postgres")("docs/DEPLOYMENT.md, followed on this machine", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll(), 60_000);

  let redis: PrivateService;
  let databaseUrl: string;
  let queue: string;
  let shared: Record<string, string>;
  let gatewayEnv: Record<string, string>;
  let workerEnv: Record<string, string>;
  let gateways: ServerProcess[];
  let worker: WorkerProcess;
  let gw1: string;
  let gw2: string;

  const stopped = async (child: ServerProcess | WorkerProcess) => {
    if (child.child.exitCode !== null || child.child.signalCode !== null) return child.exited;
    child.child.kill("SIGTERM");
    return child.exited;
  };

  beforeAll(async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    databaseUrl = database.url;
    redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    queue = `cgw-deployment-${process.pid}-${Date.now()}`;
    disposers.add(async () => {
      const connection = await amqpConnect(AMQP_URL);
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue);
      await channel.deleteQueue(`${queue}.dead`);
      await connection.close();
    });

    shared = replaced(envFile("shared"), {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redis.url,
      SECRETS_KEY: randomBytes(32).toString("base64"),
      // The guide keeps callbacks off private addresses; this test's receiver is on 127.0.0.1.
      ALLOW_PRIVATE_CALLBACKS: "true",
    });
    gatewayEnv = { ...shared, ...replaced(envFile("gateway"), { PORT: "0", AMQP_URL, AMQP_QUEUE: queue }) };
    workerEnv = { ...shared, ...replaced(envFile("worker"), { WORKER_PORT: "0" }) };
    expect([gatewayEnv.HOST, gatewayEnv.DELIVERY_WORKER, workerEnv.HOST]).toEqual(["0.0.0.0", "false", "0.0.0.0"]);

    // Step 4: the first gateway alone (with the first client's credentials given, as the guide allows),
    // then the second gateway and the worker.
    const first = await spawnServer(
      { ...gatewayEnv, BOOTSTRAP_API_KEY: API_KEY, BOOTSTRAP_SIGNING_SECRET: SIGNING_SECRET },
      60_000,
    );
    disposers.add(async () => void (await stopped(first)));
    const [second, started] = await Promise.all([spawnServer(gatewayEnv, 60_000), spawnWorker(workerEnv, 60_000)]);
    disposers.add(async () => void (await stopped(second)));
    disposers.add(async () => void (await stopped(started)));
    gateways = [first, second];
    worker = started;
    gw1 = local(first.url);
    gw2 = local(second.url);
  }, 120_000);

  it("each process is ready: the gateways with Redis up and the queue consumed, the worker on the database; all three recorded as running instances", async () => {
    for (const url of [gw1, gw2])
      await until(async () => (await json(await fetch(`${url}/readyz`))).broker === "consuming", {
        what: "the broker consumed",
      });
    for (const url of [gw1, gw2]) {
      const response = await fetch(`${url}/readyz`);
      expect([response.status, await json(response)]).toEqual([
        200,
        expect.objectContaining({ status: "ready", redis: "up", broker: "consuming", databaseKind: "postgres" }),
      ]);
    }
    const workerReady = await fetch(`${local(worker.url)}/readyz`);
    expect([workerReady.status, (await json(workerReady)).database]).toEqual([200, "up"]);
    const admin = new Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ kind: string }>("SELECT kind FROM gateway_instance ORDER BY kind");
      expect(rows.map((row) => row.kind)).toEqual(["gateway", "gateway", "worker"]);
    } finally {
      await admin.end();
    }
  });

  it("one milestone through every input (REST JSON, FSU, XFSU, RabbitMQ) reaches every output: a signed callback, a websocket subscriber on the other gateway, a GraphQL query", async () => {
    const auth = { authorization: `Bearer ${API_KEY}` };
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const subscribed = await fetch(`${gw1}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ awb: AWB, callback: `${receiver.url}/ok/deployment`, states: "*" }),
    });
    expect(subscribed.status).toBe(201);

    // The live subscriber is on gateway 2; every REST input goes to gateway 1.
    const running = await liveSubscriptions(gw2);
    const subscriber = await openSubscriber(gw2, `Bearer ${API_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe(
      "1",
      "subscription($awb: String!) { awbStatusChanged(awb: $awb) { sequence state station } }",
      {
        awb: AWB,
      },
    );
    await liveSubscriptionsRunning(gw2, running + 1);

    const ingest = async (contentType: string, body: string) => {
      const response = await fetch(`${gw1}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: { ...auth, "content-type": contentType },
        body,
      });
      expect(response.status).toBe(202);
      return (await json(response)).events as Array<{ duplicate: boolean }>;
    };
    const example = (file: string) => readFileSync(path.join(REPO, "docs/examples", file), "utf8");
    expect(
      await ingest(
        "application/json",
        JSON.stringify({
          eventId: "deployment-rcs",
          awb: AWB,
          state: "RCS",
          station: "FRA",
          timestamp: "2026-10-16T09:00:00Z",
        }),
      ),
    ).toHaveLength(1);
    expect(await ingest("text/plain", example("fsu-dep.txt"))).toHaveLength(1);
    expect(await ingest("application/xml", example("xfsu-arr.xml"))).toHaveLength(1);
    const connection = await amqpConnect(AMQP_URL);
    const channel = await connection.createConfirmChannel();
    channel.sendToQueue(queue, Buffer.from("FSU/14\n020-12345675FRAJFK/T1K100\nRCF/LH400/16OCT/JFK/T1K100\n"), {
      contentType: "text/plain",
      persistent: true,
    });
    await channel.waitForConfirms();
    await connection.close();

    const states = ["ARR", "DEP", "RCF", "RCS"];
    await until(() => receiver.posts.length >= 4 && subscriber.received.length >= 4, {
      what: "four callbacks and four live events",
      timeoutMs: 30_000,
    });
    // Callbacks: one per milestone, each signed with the client's secret (sent by the worker).
    expect(receiver.posts.map((post) => JSON.parse(post.body).State).sort()).toEqual(states);
    expect(receiver.posts.every((post) => standardVerifies(SIGNING_SECRET, post))).toBe(true);
    // Live: each on gateway 2, though stored by gateway 1 or by whichever gateway consumed the message.
    expect(subscriber.received.map((data) => data.awbStatusChanged.state).sort()).toEqual(states);
    expect(subscriber.errors).toEqual([]);
    // Query: the history, on either gateway.
    for (const url of [gw1, gw2]) {
      const answer = await json(
        await fetch(`${url}/graphql`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ query: `{ milestones(awb: "${AWB}") { state station } }` }),
        }),
      );
      expect((answer.data.milestones as Array<{ state: string }>).map((m) => m.state).sort()).toEqual(states);
    }
    expect(receiver.posts).toHaveLength(4); // one each, nothing twice

    // The worker sent them, and serves the delivery metrics the guide's "Monitoring" lists for it.
    const workerMetrics = await (await fetch(`${local(worker.url)}/metrics`)).text();
    expect(workerMetrics).toMatch(/^gateway_deliveries_total\{outcome="delivered",kind="webhook"\} 4$/m);
    for (const name of [
      "gateway_delivery_queue_depth",
      "gateway_delivery_oldest_due_age_seconds",
      "gateway_event_to_delivery_seconds",
      "gateway_subscriptions_disabled_total",
    ])
      expect(workerMetrics).toContain(`# TYPE ${name} `);
  }, 60_000);

  it("a backup as the guide takes it (pg_dump) restores (pg_restore) into a database a gateway starts on with the same SECRETS_KEY", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "cgw-backup-"));
    disposers.add(() => rm(dir, { recursive: true, force: true }));
    const dump = path.join(dir, "gateway.dump");
    await run("pg_dump", ["--format=custom", "--exclude-table-data=gateway_instance", `--file=${dump}`, databaseUrl]);
    const restored = await createPostgresDatabase({ empty: true });
    disposers.add(restored.drop);
    await run("pg_restore", ["--no-owner", `--dbname=${restored.url}`, dump]);

    const server = await spawnServer(
      { ...gatewayEnv, DATABASE_URL: restored.url, AMQP_QUEUE: `${queue}-restored` },
      60_000,
    );
    disposers.add(async () => {
      await stopped(server);
      const connection = await amqpConnect(AMQP_URL);
      const channel = await connection.createChannel();
      await channel.deleteQueue(`${queue}-restored`);
      await channel.deleteQueue(`${queue}-restored.dead`);
      await connection.close();
    });
    const history = await json(
      await fetch(`${local(server.url)}/carrier/handling/shipment/events?awb=${AWB}`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      }),
    );
    expect((history as Array<{ state: string }>).map((m) => m.state).sort()).toEqual(["ARR", "DEP", "RCF", "RCS"]);
    expect(await stopped(server)).toBe(0);
  }, 60_000);

  it("every process stops cleanly on SIGTERM (exit 0), and none is left recorded as running", async () => {
    expect(await Promise.all([...gateways, worker].map(stopped))).toEqual([0, 0, 0]);
    const admin = new Client({ connectionString: databaseUrl });
    await admin.connect();
    try {
      expect((await admin.query("SELECT id FROM gateway_instance")).rows).toEqual([]);
    } finally {
      await admin.end();
    }
  }, 30_000);
});

describeBackend("postgres")(
  'docs/DEPLOYMENT.md, "Migrations": two gateways started at the same moment on an empty database',
  () => {
    const disposers = new Disposers();
    afterAll(() => disposers.disposeAll(), 60_000);

    it("both start, and each migration is applied once (the schema engine's advisory lock)", async () => {
      const database = await createPostgresDatabase({ empty: true });
      disposers.add(database.drop);
      const env = {
        DATABASE_URL: database.url,
        SECRETS_KEY: randomBytes(32).toString("base64"),
        DELIVERY_WORKER: "false",
      };
      const servers = await Promise.all([spawnServer(env, 60_000), spawnServer(env, 60_000)]);
      for (const server of servers)
        disposers.add(async () => {
          server.child.kill("SIGTERM");
          await server.exited;
        });
      const applied = servers.map((server) =>
        server.logs
          .filter((line) => line.msg === "applied database migrations")
          .flatMap((line) => line.migrations as string[]),
      );
      const migrations = (await readdir(path.join(REPO, "prisma/migrations"), { withFileTypes: true }))
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name)
        .sort();
      expect([...applied[0]!, ...applied[1]!].sort()).toEqual(migrations); // each by one of them
      const admin = new Client({ connectionString: database.url });
      await admin.connect();
      try {
        const { rows } = await admin.query<{ migration_name: string }>(
          "SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY 1",
        );
        expect(rows.map((row) => row.migration_name)).toEqual(migrations);
      } finally {
        await admin.end();
      }
      for (const server of servers) expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    }, 90_000);
  },
);
