// npm run bench:onerecord — the ONE Record events API next to the legacy routes it stands beside, on one
// gateway process (built code, default settings but the rate limit: one key stands for every caller),
// in the same run: listing an AWB's events (GET …/logistics-events of its Shipment) against the legacy
// history of the same AWB (GET …/handling/shipment/events?awb=), and posting milestones as ONE Record
// events against JSON ingestion of the same milestones, one per request. The embedded database by
// default; BENCH_DATABASE_URL=postgres://… runs both on a PostgreSQL database (created and dropped here).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "pg";
import { Pool as HttpPool } from "undici";
import { CONNECTIONS, load, ratio, startGateway } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const KEY = "cgw_bench-admin-key-000000000001";
const MILESTONES_PER_AWB = Number(process.env.BENCH_MILESTONES ?? 20);
const POSTS = Number(process.env.BENCH_OPERATIONS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
/** AWBs the posts go to, round robin: several ingestions of one AWB queue on its stream lock. */
const POST_AWBS = 200;
const STATES = ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV"] as const;

const awbOf = (i: number) => {
  const serial7 = String(2_000_000 + i).padStart(7, "0");
  return `020-${serial7}${Number(serial7) % 7}`;
};
const at = (i: number) => new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString();

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), "bench-onerecord-"));
  const database = await databaseOf();
  const gateway = await startGateway(GATEWAY, {
    ...(database ? { DATABASE_URL: database.url } : { DATA_DIR: dataDir }),
    BOOTSTRAP_API_KEY: KEY,
    RATE_LIMIT_PER_SECOND: "0",
  });
  try {
    const { url } = gateway;
    const authorization = `Bearer ${KEY}`;
    const api = new HttpPool(url, { connections: CONCURRENCY });
    const call = async (method: "GET" | "POST", route: string, body: string, contentType: string, expected: number) => {
      const res = await api.request({
        method,
        path: route,
        headers: { authorization, "content-type": contentType, accept: "application/ld+json" },
        body,
      });
      const text = await res.body.text();
      if (res.statusCode !== expected) throw new Error(`${method} ${route}: ${res.statusCode} ${text}`);
    };

    // One AWB with a history: milestones, and an FSU's statuses (pieces, weight, an FOH).
    const awb = awbOf(0);
    const history = Array.from({ length: MILESTONES_PER_AWB }, (_, i) => ({
      awb,
      state: STATES[i % STATES.length],
      timestamp: at(i),
      station: "FRA",
      flight: "LH400",
    }));
    await call("POST", "/carrier/handling/shipment/events", JSON.stringify(history), "application/json", 202);
    const fsu = `FSU/14\n${awb}FRAJFK/T10K500\nFOH/15OCT1500/FRA/T10K500\nDEP/LH400/16OCT/FRAJFK/P4K200/A1745\n`;
    await call("POST", "/carrier/handling/shipment/events", fsu, "text/plain", 202);
    const headers = { authorization, accept: "application/ld+json" };
    console.log(`listing ${MILESTONES_PER_AWB + 2} events of one AWB, ${CONNECTIONS} connections:`);
    const legacyList = await load("legacy GET …/handling/shipment/events?awb=", {
      url: `${url}/carrier/handling/shipment/events?awb=${awb}`,
      headers,
    });
    const oneRecordList = await load("ONE Record GET …/shipment-<awb>/logistics-events", {
      url: `${url}/onerecord/logistics-objects/shipment-${awb}/logistics-events`,
      headers,
    });

    console.log(`posting ${POSTS} milestones one per request, ${CONCURRENCY} at once, over ${POST_AWBS} AWBs:`);
    const json = await measure(POSTS, (i) =>
      call(
        "POST",
        "/carrier/handling/shipment/events",
        JSON.stringify({ awb: awbOf(1 + (i % POST_AWBS)), state: "DEP", timestamp: at(i), station: "FRA" }),
        "application/json",
        202,
      ),
    );
    report("JSON POST …/handling/shipment/events", json);
    const oneRecord = await measure(POSTS, (i) =>
      call(
        "POST",
        `/onerecord/logistics-objects/shipment-${awbOf(1 + POST_AWBS + (i % POST_AWBS))}/logistics-events`,
        JSON.stringify(departure(url, at(i))),
        "application/ld+json",
        201,
      ),
    );
    report("ONE Record POST …/logistics-events", oneRecord);

    console.log("\n| measurement | ONE Record | legacy | ratio | target |\n|---|---:|---:|---:|---|");
    console.log(
      `| list an AWB's ${MILESTONES_PER_AWB + 2} events | ${oneRecordList.requestsPerSecond.toFixed(0)} req/s | ${legacyList.requestsPerSecond.toFixed(0)} req/s | **${ratio(oneRecordList, legacyList)}** | ≥ 0.5 |`,
    );
    console.log(
      `| post a milestone | ${oneRecord.perSecond.toFixed(0)} /s | ${json.perSecond.toFixed(0)} /s | **${(oneRecord.perSecond / json.perSecond).toFixed(2)}** | ≥ 0.5 |`,
    );
    await api.close();
  } finally {
    gateway.child.kill("SIGTERM");
    await new Promise((resolve) => gateway.child.once("exit", resolve));
    await database?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** A departure as a forwarder's ONE Record client writes it (compacted, its own small context). */
function departure(url: string, eventDate: string) {
  return {
    "@context": { cargo: "https://onerecord.iata.org/ns/cargo#", xsd: "http://www.w3.org/2001/XMLSchema#" },
    "@type": "cargo:StatusUpdateEvent",
    "cargo:eventCode": { "@id": "https://onerecord.iata.org/ns/code-lists/StatusCode#DEP" },
    "cargo:eventDate": { "@type": "xsd:dateTime", "@value": eventDate },
    "cargo:eventTimeType": { "@id": "cargo:ACTUAL" },
    "cargo:eventLocation": { "@id": `${url}/onerecord/logistics-objects/location-FRA` },
  };
}

interface Measured {
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `operation(i)` for i in 0..n-1 with CONCURRENCY in flight, after a tenth as many as warm-up. */
async function measure(n: number, operation: (i: number) => Promise<void>): Promise<Measured> {
  const run = async (from: number, count: number) => {
    const latencies: number[] = [];
    let next = from;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < from + count) {
          const i = next++;
          const t = performance.now();
          await operation(i);
          latencies.push(performance.now() - t);
        }
      }),
    );
    return { seconds: (performance.now() - started) / 1000, latencies: latencies.sort((a, b) => a - b) };
  };
  const warmUp = Math.ceil(n / 10);
  await run(0, warmUp);
  const { seconds, latencies } = await run(warmUp, n);
  const q = (x: number) => latencies[Math.min(latencies.length - 1, Math.floor(x * latencies.length))]!;
  return { perSecond: n / seconds, p50: q(0.5), p99: q(0.99) };
}

function report(name: string, m: Measured): void {
  console.log(
    `${name.padEnd(48)} ${m.perSecond.toFixed(0).padStart(8)} /s       p50 ${m.p50.toFixed(1).padStart(6)} ms   p99 ${m.p99.toFixed(1).padStart(6)} ms`,
  );
}

async function databaseOf(): Promise<{ url: string; drop: () => Promise<void> } | undefined> {
  const admin = process.env.BENCH_DATABASE_URL;
  if (!admin) return undefined;
  const name = `bench_onerecord_${process.pid}`;
  const run = async (sql: string) => {
    const client = new Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await run(`CREATE DATABASE "${name}"`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`) };
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
