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

/**
 * When `delivery` was last analysed — by autovacuum, or by the gateway (db/table-upkeep.ts) — and how
 * many rows the planner then counted: a claim's plan rests on it, and a table that filled up faster
 * than autovacuum looked at it is planned as a small one unless the gateway analysed it.
 */
async function plannerStatistics(databaseUrl: string): Promise<string> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ auto: Date | null; own: Date | null; reltuples: number; live: string }>(
      `SELECT s.last_autoanalyze AS auto, s.last_analyze AS own, c.reltuples, s.n_live_tup::text AS live
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'delivery'`,
    );
    const row = rows[0];
    if (!row) return "delivery: no statistics";
    const ago = (at: Date | null) => (at ? `${((Date.now() - at.getTime()) / 1_000).toFixed(0)} s ago` : "never");
    return `delivery analysed by autovacuum ${ago(row.auto)}, by the gateway ${ago(row.own)}; the planner counts ${row.reltuples} rows (${row.live} live now)`;
  } finally {
    await client.end();
  }
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
