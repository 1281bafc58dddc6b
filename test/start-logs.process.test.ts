import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describeBackend } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";
import { type ServerProcess, spawnServer } from "./support/process";
import { until } from "./support/webhooks";
import { spawnWorker } from "./support/worker-process";

/**
 * What an operator reads when things are normal: a first start on Redis, with nothing to deliver,
 * logs no warning (connecting to Redis is no outage, a first client is no alarm, a gateway that sends
 * nothing needs no token endpoint); the standalone worker says it stopped. Needs `npm run build`.
 */
const REDIS_URL = "redis://127.0.0.1:6379";

const warnings = (logs: ReadonlyArray<Record<string, unknown>>) =>
  logs.filter((line) => typeof line.level === "number" && line.level >= 40).map((line) => line.msg);

describe("the logs of a normal start", () => {
  let dataDir: string;
  let server: ServerProcess | undefined;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-start-logs-"));
  });
  afterAll(async () => {
    server?.child.kill("SIGTERM");
    await server?.exited;
    await rm(dataDir, { recursive: true, force: true });
  });

  it("has no warning on a first start with Redis of a gateway that sends nothing, and says Redis connected", async () => {
    // No delivery worker and no proposal loop: nothing of this process calls a partner.
    server = await spawnServer({
      DATA_DIR: dataDir,
      REDIS_URL,
      DELIVERY_WORKER: "false",
      ONE_RECORD_PROPOSAL_INTERVAL_MS: "0",
    });
    const logs = server.logs;
    await until(() => logs.some((line) => line.msg === "redis connected: live events fan out across instances"), {
      what: "the live fan-out's Redis connection",
    });
    expect(warnings(logs)).toEqual([]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 30, msg: "created the bootstrap client with every scope" }),
    );
    expect(logs.filter((line) => String(line.msg).startsWith("ONE_RECORD_TOKEN_URL"))).toEqual([]);
  });
});

describeBackend("postgres")("the standalone worker's stop", () => {
  it("logs that it stopped after SIGTERM, and exits 0", async () => {
    const database = await createPostgresDatabase();
    try {
      const worker = await spawnWorker({ DATABASE_URL: database.url });
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toBe(0);
      const messages = worker.logs.map((line) => line.msg);
      expect(messages).toContain("stopping: finishing the sends in flight");
      expect(messages).toContain("stopped");
    } finally {
      await database.drop();
    }
  });
});
