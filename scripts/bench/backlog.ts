// npm run bench:backlog — does delivery slow down when a large backlog is waiting? The delivery
// rate of the first BENCH_MEASURED (10,000) deliveries when BENCH_BACKLOG (100,000) more are pending
// behind them, next to the same measurement with nothing behind them, in the same run.
//
// Each case: the gateway as `npm start` runs it (built code, its own process, default settings, data
// on disk) with DELIVERY_WORKER=false ingests the events (calls of 500, each event matching one of
// 50 subscriptions, one callback origin), and stops; then it starts again with its worker (the
// default) and the clock runs from its /readyz until the receiver (its own process) has counted
// BENCH_MEASURED POSTs. On the embedded database a third case repeats the large backlog with
// EMBEDDED_VACUUM_ROWS=0 (no upkeep), to show what the upkeep moves.
//
// BENCH_DATABASE: embedded, postgres or both (default both; postgres uses a fresh database on
// TEST_POSTGRES_URL's server).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { request } from "undici";
import {
  awbWithCheckDigit,
  freshPostgresDatabase,
  plannerStatistics,
  receivedPosts,
  serverDefaultAutovacuum,
  startGateway,
  startProcess,
  subscribeEach,
} from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const RECEIVER = path.resolve(__dirname, "receiver.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const MEASURED = Number(process.env.BENCH_MEASURED ?? 10_000);
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 100_000);
const DATABASES = (process.env.BENCH_DATABASE ?? "embedded,postgres").split(",");
const BATCH = 500;
const AWBS = 50;
const KEY = "cgw_bench-backlog-key-00000000001";
const DB_NAME = "gw_bench_backlog";

const awbOf = (i: number) => awbWithCheckDigit(6_000_000 + i);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function stop(gateway: Awaited<ReturnType<typeof startGateway>>): Promise<void> {
  const exited = new Promise((r) => gateway.child.once("exit", r));
  gateway.child.kill("SIGTERM");
  await exited;
}

/** A fresh database's settings: a new data folder, or a new database on the server. */
async function freshDatabase(database: string, admin: Client): Promise<{ env: Record<string, string>; drop(): void }> {
  if (database === "embedded") {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "cgw-backlog-"));
    return { env: { DATA_DIR: dataDir }, drop: () => rmSync(dataDir, { recursive: true, force: true }) };
  }
  return { env: { DATABASE_URL: await freshPostgresDatabase(admin, ADMIN, DB_NAME) }, drop: () => {} };
}

/** Deliveries per second over the first MEASURED of `pending` queued deliveries. */
async function drainRate(
  database: string,
  pending: number,
  extraEnv: Record<string, string>,
  admin: Client,
  receiverUrl: string,
): Promise<number> {
  const fresh = await freshDatabase(database, admin);
  const env = {
    ...fresh.env,
    ...extraEnv,
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
  };
  try {
    const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const filling = await startGateway(GATEWAY, { ...env, DELIVERY_WORKER: "false" });
    try {
      await subscribeEach(
        filling.url,
        KEY,
        Array.from({ length: AWBS }, (_, i) => awbOf(i)),
        `${receiverUrl}/hook`,
      );
      for (let sent = 0; sent < pending; sent += BATCH) {
        const events = Array.from({ length: Math.min(BATCH, pending - sent) }, (_, k) => ({
          eventId: `backlog-${sent + k}`,
          awb: awbOf((sent + k) % AWBS),
          state: "DEP",
        }));
        const res = await request(`${filling.url}/carrier/handling/shipment/events`, {
          method: "POST",
          headers,
          body: JSON.stringify(events),
        });
        if (res.statusCode !== 202) throw new Error(`ingest: ${res.statusCode} ${await res.body.text()}`);
        await res.body.dump();
      }
    } finally {
      await stop(filling);
    }
    if (fresh.env.DATABASE_URL) console.log(`  ${await plannerStatistics(fresh.env.DATABASE_URL)}`);
    const before = await receivedPosts(receiverUrl);
    const gateway = await startGateway(GATEWAY, env);
    const started = performance.now();
    try {
      while ((await receivedPosts(receiverUrl)) - before < MEASURED) await sleep(20);
      return MEASURED / ((performance.now() - started) / 1_000);
    } finally {
      await stop(gateway);
    }
  } finally {
    fresh.drop();
  }
}

async function main(): Promise<void> {
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  try {
    console.log(
      `bench:backlog — the first ${MEASURED} deliveries after a start, with nothing or ${BACKLOG} more pending behind them; default settings, one callback origin`,
    );
    const rows: string[] = [];
    for (const database of DATABASES) {
      const restoreAutovacuum = database === "postgres" ? await serverDefaultAutovacuum(admin) : async () => {};
      try {
        const empty = await drainRate(database, MEASURED, {}, admin, receiver.url);
        console.log(`${database}, ${MEASURED} pending: ${empty.toFixed(0)} deliveries/s`);
        const full = await drainRate(database, MEASURED + BACKLOG, {}, admin, receiver.url);
        console.log(`${database}, ${MEASURED + BACKLOG} pending: ${full.toFixed(0)} deliveries/s`);
        rows.push(
          `${database}: ${full.toFixed(0)}/s with ${BACKLOG} behind vs ${empty.toFixed(0)}/s → ${(full / empty).toFixed(2)}x (target >= 0.9)`,
        );
        if (database === "embedded") {
          const bare = await drainRate(
            database,
            MEASURED + BACKLOG,
            { EMBEDDED_VACUUM_ROWS: "0" },
            admin,
            receiver.url,
          );
          console.log(
            `${database}, ${MEASURED + BACKLOG} pending, EMBEDDED_VACUUM_ROWS=0: ${bare.toFixed(0)} deliveries/s`,
          );
          rows.push(`${database} without upkeep: ${bare.toFixed(0)}/s → ${(bare / empty).toFixed(2)}x`);
        }
      } finally {
        await restoreAutovacuum();
      }
    }
    for (const row of rows) console.log(row);
  } finally {
    await admin.end();
    receiver.child.kill("SIGTERM");
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
