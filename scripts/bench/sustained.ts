// npm run bench:sustained — milestones at a steady rate, each matching one subscription, against the
// gateway as `npm start` runs it (built code, its own process, default settings, data on disk) plus
// ALLOW_PRIVATE_CALLBACKS=true (the receiver is on loopback) and RATE_LIMIT_PER_SECOND=0 (one key
// drives the whole load). Every 100 ms a batch of BENCH_RATE/10 events over 50 AWBs, each AWB with
// one subscription (states `*`); a receiver in its own process counts POSTs. Every 10 s it prints
// events accepted, callbacks received and the backlog (pending deliveries, from /metrics) in that
// window; at the end a verdict: kept up (backlog flat) or fell behind.
//
// BENCH_RATE (events/s, default 2000), BENCH_DURATION (s, default 600), BENCH_DATABASE
// (embedded | postgres, default embedded; postgres uses a fresh database on TEST_POSTGRES_URL's server).
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { request } from "undici";
import {
  awbWithCheckDigit,
  freshPostgresDatabase,
  metricsOf,
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
const RATE = Number(process.env.BENCH_RATE ?? 2_000);
const DURATION_S = Number(process.env.BENCH_DURATION ?? 600);
const DATABASE = process.env.BENCH_DATABASE ?? "embedded";
const TICK_MS = 100;
const WINDOW_MS = 10_000;
/** Batches in flight at most: past that a tick is skipped (and shows as events not sent). */
const MAX_IN_FLIGHT = 10;
const AWBS = 50;
const KEY = "cgw_bench-sustained-key-0000000001";
const DB_NAME = "gw_bench_sustained";

const awbOf = (i: number) => awbWithCheckDigit(7_000_000 + i);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function databaseEnv(admin: Client | undefined, dataDir: string): Promise<Record<string, string>> {
  if (!admin) return { DATA_DIR: dataDir };
  return { DATABASE_URL: await freshPostgresDatabase(admin, ADMIN, DB_NAME) };
}

async function main(): Promise<void> {
  if (DATABASE !== "embedded" && DATABASE !== "postgres") throw new Error("BENCH_DATABASE: embedded or postgres");
  const perBatch = Math.round(RATE / (1_000 / TICK_MS));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "cgw-sustained-"));
  const admin = DATABASE === "postgres" ? new Client({ connectionString: ADMIN }) : undefined;
  await admin?.connect();
  const restoreAutovacuum = admin ? await serverDefaultAutovacuum(admin) : async () => {};
  try {
    await measure(admin, dataDir, perBatch);
  } finally {
    await restoreAutovacuum();
    await admin?.end();
  }
}

async function measure(admin: Client | undefined, dataDir: string, perBatch: number): Promise<void> {
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const database = await databaseEnv(admin, dataDir);
  const gateway = await startGateway(GATEWAY, {
    ...database,
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
  });
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  try {
    await subscribeEach(
      gateway.url,
      KEY,
      Array.from({ length: AWBS }, (_, i) => awbOf(i)),
      `${receiver.url}/hook`,
    );
    console.log(
      `bench:sustained — ${RATE} events/s (${perBatch} every ${TICK_MS} ms over ${AWBS} AWBs, one subscription each) for ${DURATION_S} s on ${DATABASE}`,
    );
    console.log("    t(s)  sent/s  delivered/s   backlog  skipped batches");

    let accepted = 0;
    let failed = 0;
    let skipped = 0;
    let inFlight = 0;
    let sequence = 0;
    const ingest = async (): Promise<void> => {
      const batch = sequence++;
      const body = JSON.stringify(
        Array.from({ length: perBatch }, (_, k) => ({
          eventId: `s${batch}-${k}`,
          awb: awbOf((batch * perBatch + k) % AWBS),
          state: "DEP",
        })),
      );
      inFlight++;
      try {
        const res = await request(`${gateway.url}/carrier/handling/shipment/events`, { method: "POST", headers, body });
        await res.body.dump();
        if (res.statusCode === 202) accepted += perBatch;
        else failed += perBatch;
      } catch {
        failed += perBatch;
      } finally {
        inFlight--;
      }
    };

    const started = performance.now();
    let nextTick = started;
    let nextWindow = started + WINDOW_MS;
    let lastAccepted = 0;
    let lastDelivered = 0;
    const backlogs: number[] = [];
    const deliveredRates: number[] = [];
    while (performance.now() - started < DURATION_S * 1_000) {
      if (inFlight < MAX_IN_FLIGHT) void ingest();
      else skipped++;
      nextTick += TICK_MS;
      if (performance.now() >= nextWindow) {
        const delivered = await receivedPosts(receiver.url);
        const backlog = (await metricsOf(gateway.url)).get("gateway_delivery_queue_depth") ?? NaN;
        const seconds = WINDOW_MS / 1_000;
        const deliveredRate = (delivered - lastDelivered) / seconds;
        backlogs.push(backlog);
        deliveredRates.push(deliveredRate);
        console.log(
          `${((nextWindow - started) / 1_000).toFixed(0).padStart(8)} ${((accepted - lastAccepted) / seconds).toFixed(0).padStart(7)} ${deliveredRate.toFixed(0).padStart(12)} ${String(backlog).padStart(9)} ${String(skipped).padStart(16)}`,
        );
        lastAccepted = accepted;
        lastDelivered = delivered;
        nextWindow += WINDOW_MS;
      }
      await sleep(Math.max(0, nextTick - performance.now()));
    }
    while (inFlight > 0) await sleep(10);
    const elapsed = (performance.now() - started) / 1_000;
    const delivered = await receivedPosts(receiver.url);
    const tail = backlogs.slice(-6);
    const kept = failed === 0 && skipped === 0 && Math.max(...tail) < 2 * RATE;
    console.log(
      `${accepted} events accepted (${(accepted / elapsed).toFixed(0)}/s), ${failed} refused or failed, ${skipped} batches skipped; ${delivered} callbacks received (${(delivered / elapsed).toFixed(0)}/s); backlog over the last minute ${tail.join(", ")}; delivered/s min ${Math.min(...deliveredRates).toFixed(0)}, max ${Math.max(...deliveredRates).toFixed(0)}`,
    );
    console.log(
      kept
        ? `kept up: the backlog stayed under two seconds of events`
        : `fell behind: backlog ${backlogs.at(-1)} at the end`,
    );
  } finally {
    gateway.child.kill("SIGTERM");
    await new Promise((r) => gateway.child.once("exit", r));
    receiver.child.kill("SIGTERM");
    if (admin) {
      if (database.DATABASE_URL) console.log(await plannerStatistics(database.DATABASE_URL));
      await admin.query(`DROP DATABASE IF EXISTS "${DB_NAME}" WITH (FORCE)`);
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
