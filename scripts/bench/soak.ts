// npm run bench:soak — the gateway ingesting and delivering without pause for BENCH_SOAK_MINUTES
// (default 10) with retention running, to see that table sizes and the process's memory stay flat
// while throughput holds. Not a test: it prints a table per minute and a verdict, for BENCHMARKS.md.
//
// The gateway: its own process, the settings a user gets by default (embedded database, here on disk
// in a temporary folder as `npm start` keeps it; LOG_LEVEL info, its log piped to a reader), except
// that retention's ages are minutes instead of days so that it has something to delete within the run
// (RETENTION_*_DAYS = BENCH_SOAK_RETENTION_MINUTES, default 1, as a fraction of a day; runs every
// 20 s). The receiver: its own process (204 to every POST). The load: BENCH_SOAK_CLIENTS (default 4)
// loops in this process, each POSTing BENCH_SOAK_BATCH events (default 1) at a time, spread over 200
// AWBs, each AWB with one subscription; every event is one notification.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { metricsOf, startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const RECEIVER = path.resolve(__dirname, "receiver.js");
const MINUTES = Number(process.env.BENCH_SOAK_MINUTES ?? 10);
const RETENTION_MINUTES = Number(process.env.BENCH_SOAK_RETENTION_MINUTES ?? 1);
const CLIENTS = Number(process.env.BENCH_SOAK_CLIENTS ?? 4);
const BATCH = Number(process.env.BENCH_SOAK_BATCH ?? 1);
const AWBS = 200;
const API_KEY = "cgw_bench-soak-key-000000000001";

const awbOf = (i: number) => {
  const serial = 6_000_000 + i;
  return `020-${serial}${serial % 7}`;
};

function rssBytes(pid: number): Promise<number> {
  return import("node:fs/promises").then(async (fs) => {
    const status = await fs.readFile(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return Number(kb ?? 0) * 1024;
  });
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "cgw-soak-"));
  const retentionDays = String(RETENTION_MINUTES / 1_440);
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const gateway = await startGateway(GATEWAY, {
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: API_KEY,
    ALLOW_PRIVATE_CALLBACKS: "true", // the receiver is on loopback
    RATE_LIMIT_PER_SECOND: "0", // one key drives the whole load
    RETENTION_DELIVERED_DAYS: retentionDays,
    RETENTION_DEAD_DAYS: retentionDays,
    RETENTION_EVENTS_DAYS: retentionDays,
    RETENTION_INTERVAL_MS: "20000",
  });
  const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" };
  try {
    for (let i = 0; i < AWBS; i++) {
      const answer = await fetch(`${gateway.url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers,
        body: JSON.stringify({ awb: awbOf(i), callback: `${receiver.url}/hook/${i}`, states: "*" }),
      });
      if (answer.status !== 201) throw new Error(`subscribe answered ${answer.status}: ${await answer.text()}`);
    }

    let running = true;
    let sent = 0;
    let failed = 0;
    const loops = Array.from({ length: CLIENTS }, async (_, c) => {
      for (let n = 0; running; n++) {
        const answer = await fetch(`${gateway.url}/carrier/handling/shipment/events`, {
          method: "POST",
          headers,
          body: JSON.stringify(
            Array.from({ length: BATCH }, (_, b) => ({
              awb: awbOf((n * CLIENTS * BATCH + c * BATCH + b) % AWBS),
              state: "DEP",
              eventId: `soak-${c}-${n}-${b}`,
            })),
          ),
        });
        await answer.arrayBuffer();
        if (answer.status === 202) sent += BATCH;
        else failed += BATCH;
      }
    });

    console.log(
      `soak: ${MINUTES} min, ${CLIENTS} ingesting loops of ${BATCH} events a request, ${AWBS} AWBs with a subscription each, retention ${RETENTION_MINUTES} min`,
    );
    console.log(
      "| minute | events/s | delivered/s | pending | status_event rows | delivery rows | attempt rows | DB tables MiB | RSS MiB | deleted so far |",
    );
    console.log("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let before = { sent: 0, delivered: 0, at: Date.now() };
    for (let minute = 1; minute <= MINUTES; minute++) {
      await new Promise((resolve) => setTimeout(resolve, 60_000));
      const metrics = await metricsOf(gateway.url);
      const now = Date.now();
      const delivered = metrics.get('gateway_deliveries_total{outcome="delivered",kind="webhook"}') ?? 0;
      const seconds = (now - before.at) / 1000;
      const table = (name: string) => metrics.get(`gateway_table_rows_estimate{table="${name}"}`) ?? NaN;
      const bytes = [...metrics].filter(([k]) => k.startsWith("gateway_table_bytes{")).reduce((a, [, v]) => a + v, 0);
      const deleted = [...metrics]
        .filter(([k]) => k.startsWith("gateway_retention_deleted_total{"))
        .reduce((a, [, v]) => a + v, 0);
      const row = `| ${minute} | ${((sent - before.sent) / seconds).toFixed(0)} | ${((delivered - before.delivered) / seconds).toFixed(0)} | ${metrics.get("gateway_delivery_queue_depth") ?? NaN} | ${table("status_event").toFixed(0)} | ${table("delivery").toFixed(0)} | ${table("delivery_attempt").toFixed(0)} | ${(bytes / 1_048_576).toFixed(1)} | ${((await rssBytes(gateway.child.pid!)) / 1_048_576).toFixed(0)} | ${deleted} |`;
      console.log(row);
      before = { sent, delivered, at: now };
    }
    running = false;
    await Promise.all(loops);
    console.log(`events accepted: ${sent}, refused or failed: ${failed}`);
  } finally {
    gateway.child.kill("SIGTERM");
    receiver.child.kill("SIGTERM");
    await new Promise((resolve) => gateway.child.once("exit", resolve));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
