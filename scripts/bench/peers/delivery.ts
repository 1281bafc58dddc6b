// bench:peers' delivery rows: the gateway's bench:delivery run on PostgreSQL (ingestion → every
// outcome recorded) against graphile-worker (graphile-worker.ts, its own process) on the same
// PostgreSQL server, posting the same signed bodies to the same receiver at the same concurrency.
// graphile-worker's job inserts are timed, as the gateway's ingestion is: both windows start when the
// first batch of 500 is handed over and end when the last delivery's outcome is recorded.
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { makeWorkerUtils } from "graphile-worker";
import { Client } from "pg";
import { bareRate, EVENTS, gatewayRate, KEY, PER_ORIGIN, SECRET, sameShapedBodies } from "../delivery";
import type { DeliverPayload } from "./graphile-worker";

const GRAPHILE_WORKER = path.resolve(__dirname, "graphile-worker.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
/** As the gateway's ingestion calls: 500 events (here jobs) a call. */
const BATCH = 500;
const POLL_MS = 50;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh database on the benchmark's PostgreSQL server; its URL. */
async function freshDatabase(admin: Client, name: string): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(ADMIN);
  url.pathname = `/${name}`;
  return url.toString();
}

async function startGraphileWorker(databaseUrl: string, tuning: "default" | "batched"): Promise<ChildProcess> {
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...profile, GRAPHILE_WORKER], {
    env: {
      PATH: process.env.PATH ?? "",
      DATABASE_URL: databaseUrl,
      CONCURRENCY: String(PER_ORIGIN),
      SIGNING_SECRET: SECRET,
      GRAPHILE_TUNING: tuning,
      NO_LOG_SUCCESS: "1",
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      if (line.includes('"graphile worker running"')) resolve();
    });
    child.once("exit", (code) => reject(new Error(`graphile worker exited with ${code} before running`)));
  });
  return child;
}

/**
 * From the first addJobs call until no job is left (graphile-worker deletes a job once it succeeded):
 * EVENTS jobs in calls of BATCH, the worker already running, as the gateway's worker is.
 */
async function graphileRate(
  admin: Client,
  callback: string,
  tuning: "default" | "batched",
): Promise<{ rate: number; insertedMs: number }> {
  const databaseUrl = await freshDatabase(admin, "gw_bench_peers_graphile");
  const worker = await startGraphileWorker(databaseUrl, tuning);
  const utils = await makeWorkerUtils({ connectionString: databaseUrl });
  const counter = new Client({ connectionString: databaseUrl });
  await counter.connect();
  try {
    const bodies = sameShapedBodies();
    const batches = Array.from({ length: Math.ceil(bodies.length / BATCH) }, (_, b) =>
      bodies.slice(b * BATCH, (b + 1) * BATCH).map(({ id, payload }) => ({
        identifier: "deliver",
        payload: { id, url: callback, body: payload } satisfies DeliverPayload,
      })),
    );
    await sleep(1_000);
    const started = performance.now();
    for (const jobs of batches) await utils.addJobs(jobs);
    const insertedMs = performance.now() - started;
    for (;;) {
      const { rows } = await counter.query<{ left: number; failed: number }>(
        "SELECT count(*)::int AS left, count(last_error)::int AS failed FROM graphile_worker.jobs",
      );
      if (rows[0]!.failed > 0) throw new Error(`graphile-worker: ${rows[0]!.failed} jobs failed`);
      if (rows[0]!.left === 0) break;
      await sleep(POLL_MS);
    }
    const elapsedMs = performance.now() - started;
    const rate = EVENTS / (elapsedMs / 1000);
    console.log(
      `graphile-worker (${tuning}): ${EVENTS} jobs added in ${(insertedMs / 1000).toFixed(2)} s and done in ${(elapsedMs / 1000).toFixed(2)} s → ${rate.toFixed(0)} deliveries/s`,
    );
    return { rate, insertedMs };
  } finally {
    await counter.end();
    await utils.release();
    worker.kill("SIGTERM");
    await new Promise((r) => worker.once("exit", r));
  }
}

export async function deliveryRows(receiverUrl: string): Promise<string[]> {
  const callback = `${receiverUrl}/hook`;
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  try {
    console.log(
      `delivery: ${EVENTS} notifications, one callback origin, ${PER_ORIGIN} in flight, PostgreSQL on loopback; the gateway with default settings`,
    );
    const gatewayEnv = {
      BOOTSTRAP_API_KEY: KEY,
      BOOTSTRAP_SIGNING_SECRET: SECRET,
      ALLOW_PRIVATE_CALLBACKS: "true",
      LOG_LEVEL: "info",
      DATABASE_URL: await freshDatabase(admin, "gw_bench_delivery"),
    };
    const gateway = await gatewayRate(gatewayEnv, callback, "gateway on postgres");
    const graphile = await graphileRate(admin, callback, "default");
    const batched = await graphileRate(admin, callback, "batched");
    const bare = await bareRate(callback, sameShapedBodies());
    console.log(`bare undici loop: ${bare.rate.toFixed(0)} deliveries/s`);
    const per = (rate: number) => `${rate.toFixed(0)}/s`;
    return [
      `delivery vs graphile-worker (defaults): gateway ${per(gateway.rate)} (ingestion ${(gateway.ingestedMs / 1000).toFixed(2)} s), graphile-worker ${per(graphile.rate)} (inserts ${(graphile.insertedMs / 1000).toFixed(2)} s) → ${(gateway.rate / graphile.rate).toFixed(2)}x`,
      `delivery vs graphile-worker (local queue, batched completions): ${per(batched.rate)} (inserts ${(batched.insertedMs / 1000).toFixed(2)} s) → ${(gateway.rate / batched.rate).toFixed(2)}x`,
      `bare undici loop (for scale): ${per(bare.rate)} → gateway ${(gateway.rate / bare.rate).toFixed(2)}x, graphile-worker ${(graphile.rate / bare.rate).toFixed(2)}x`,
    ];
  } finally {
    await admin.query('DROP DATABASE IF EXISTS "gw_bench_delivery" WITH (FORCE)');
    await admin.query('DROP DATABASE IF EXISTS "gw_bench_peers_graphile" WITH (FORCE)');
    await admin.end();
  }
}
