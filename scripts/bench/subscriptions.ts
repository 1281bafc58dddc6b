// npm run bench:subscriptions — create/get/update/delete through the gateway's REST routes next to a
// raw-`pg` server doing the same rows (scripts/bench/raw-pg-server.ts), each its own process, driven
// the same way over HTTP at the same concurrency, in the same run, on the same PostgreSQL. Both send
// create's OPTIONS check to one callback receiver (scripts/bench/receiver.ts), a process of its own
// too. The gateway runs with its default settings (LOG_LEVEL info) except the rate limit (off: one
// key stands for every caller) and ALLOW_PRIVATE_CALLBACKS (the receiver is on loopback).
import path from "node:path";
import { Client } from "pg";
import { Pool as HttpPool } from "undici";
import { startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const RAW_PG_SERVER = path.resolve(__dirname, "raw-pg-server.js");
const RECEIVER = path.resolve(__dirname, "receiver.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const OPERATIONS = Number(process.env.BENCH_OPERATIONS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
/** Operations of each kind run on each server before anything is measured, so both are warm. */
const WARM_UP = Number(process.env.BENCH_WARM_UP ?? Math.min(500, OPERATIONS));
const KEY = "cgw_bench-admin-key-000000000001";
const BASE = "/carrier/handling/shipment/subscribe";

interface Measured {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `operation(i)` for i in 0..n-1 with `concurrency` in flight; per-operation latency in ms. Printed when named. */
async function measure(
  name: string | undefined,
  n: number,
  concurrency: number,
  operation: (i: number) => Promise<void>,
): Promise<Measured> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++;
        const t = performance.now();
        await operation(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  const result = { name: name ?? "", perSecond: n / seconds, p50: at(0.5), p99: at(0.99) };
  if (name === undefined) return result;
  console.log(
    `${name.padEnd(44)} ${result.perSecond.toFixed(0).padStart(7)} op/s   p50 ${result.p50.toFixed(1).padStart(6)} ms   p99 ${result.p99.toFixed(1).padStart(6)} ms`,
  );
  return result;
}

const awbFor = (i: number) => {
  const serial7 = String(1_000_000 + i).padStart(7, "0");
  return `020-${serial7}${Number(serial7) % 7}`;
};

/** One server under load: the four operations over HTTP, each answer's status checked. */
function target(url: string, callbackBase: string) {
  const api = new HttpPool(url, { connections: CONCURRENCY });
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const call = async (method: "POST" | "GET" | "PUT" | "DELETE", path: string, body: unknown, expected: number) => {
    const res = await api.request({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    if (res.statusCode !== expected) throw new Error(`${method} ${url}${path}: ${res.statusCode} ${text}`);
    return text;
  };
  const ids: string[] = [];
  return {
    /** Subscription `i` (AWB and callback of its own), remembering its id for the operations after. */
    create: async (i: number) => {
      const body = { awb: awbFor(i), callback: `${callbackBase}/${i}`, states: "DEP,ARR" };
      ids[i] = (JSON.parse(await call("POST", BASE, body, 201)) as { subscriptionId: string }).subscriptionId;
    },
    get: async (i: number) => void (await call("GET", `${BASE}/${ids[i]}`, undefined, 200)),
    /** The same callback, so no OPTIONS: the gateway's update in place. */
    update: async (i: number) =>
      void (await call(
        "PUT",
        `${BASE}/${ids[i]}`,
        { AWB: awbFor(i), Callback: `${callbackBase}/${i}`, States: "*" },
        200,
      )),
    remove: async (i: number) => void (await call("DELETE", `${BASE}/${ids[i]}`, undefined, 204)),
    close: () => api.close(),
  };
}

async function main(): Promise<void> {
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS "gw_bench" WITH (FORCE)');
  await admin.query('CREATE DATABASE "gw_bench"');
  const url = new URL(ADMIN);
  url.pathname = "/gw_bench";
  const databaseUrl = url.toString();

  const gateway = await startGateway(GATEWAY, {
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: "info", // the default, said here because it is part of what is measured
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
  });
  // Started after the gateway, which created the tables.
  const raw = await startProcess(RAW_PG_SERVER, [], { DATABASE_URL: databaseUrl }, "raw-pg listening");
  const servers = {
    gateway: target(gateway.url, `${receiver.url}/hooks/gateway`),
    raw: target(raw.url, `${receiver.url}/hooks/raw`),
  };

  console.log(
    `bench:subscriptions — ${OPERATIONS} operations per measurement (after ${WARM_UP} to warm up), ${CONCURRENCY} in flight, PostgreSQL ${url.host}`,
  );
  try {
    // Warm-up rows use indexes past the measured ones and are deleted again.
    for (const server of Object.values(servers)) {
      for (const step of [server.create, server.get, server.update, server.remove])
        await measure(undefined, WARM_UP, CONCURRENCY, (i) => step(OPERATIONS + i));
    }
    const results: Record<string, { gateway: Measured; raw: Measured }> = {};
    for (const operation of ["create", "get", "update", "remove"] as const) {
      const gatewayResult = await measure(`gateway ${operation}`, OPERATIONS, CONCURRENCY, servers.gateway[operation]);
      const rawResult = await measure(`raw pg ${operation}`, OPERATIONS, CONCURRENCY, servers.raw[operation]);
      results[operation] = { gateway: gatewayResult, raw: rawResult };
    }
    const ratio = (operation: string) =>
      (results[operation]!.gateway.perSecond / results[operation]!.raw.perSecond).toFixed(2);
    console.log("\nratios (operations per second, gateway / raw pg):");
    console.log(`  create   ${ratio("create")}  (target >= 0.3)`);
    console.log(`  get      ${ratio("get")}  (target >= 0.6)`);
    console.log(`  update   ${ratio("update")}`);
    console.log(`  delete   ${ratio("remove")}`);
  } finally {
    await servers.gateway.close();
    await servers.raw.close();
    for (const child of [gateway.child, raw.child, receiver.child]) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await admin.query('DROP DATABASE IF EXISTS "gw_bench" WITH (FORCE)');
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
