// npm run bench:delivery — milestone delivery throughput on PostgreSQL and on the embedded default,
// each next to a bare undici loop in its own process posting the same signed bodies at the same
// concurrency to the same receiver (its own process too); then event-to-callback latency.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { request } from "undici";
import { notificationBody } from "../../src/delivery/notification";
import { metricsOf, startGateway, startProcess } from "./harness";
import { processCpuMs } from "./process-cpu";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const RECEIVER = path.resolve(__dirname, "receiver.js");
const BARE_SENDER = path.resolve(__dirname, "bare-sender.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
export const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BATCH = 500;
export const KEY = "cgw_bench-admin-key-000000000002";
export const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=";
/** DELIVERY_PER_ORIGIN's default: every delivery here goes to one origin. */
export const PER_ORIGIN = 8;

export const awbFor = (i: number) => {
  const serial = String(3_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
};
/** The bodies the gateway signs and sends here (same fields, same sizes), for loops that send them without it. */
export const sameShapedBodies = (): Array<{ id: string; payload: string }> =>
  Array.from({ length: EVENTS }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
    payload: notificationBody({
      subscriptionId: "7b3c1f0e-9a41-4a55-9d3e-2a7f54c1e0aa",
      awb: awbFor(i % 50),
      state: "DEP",
      toaTimestamp: null,
      receivedAt: new Date(),
    }),
  }));
const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loop's deliveries per second, and the CPU its process spent per delivery (all its threads), in µs. */
export interface DeliveryRate {
  readonly rate: number;
  readonly cpuUsPerDelivery: number;
}

/** The bare loop in its own process: the time it takes to sign and POST these bodies, and its CPU. */
export async function bareRate(
  callback: string,
  deliveries: Array<{ id: string; payload: string }>,
): Promise<DeliveryRate> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "cgw-bench-"));
  const input = path.join(dir, "input.json");
  writeFileSync(input, JSON.stringify({ url: callback, secret: SECRET, concurrency: PER_ORIGIN, deliveries }));
  const { spawn } = await import("node:child_process");
  const child = spawn(process.execPath, [BARE_SENDER, input], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  await new Promise((r) => child.once("exit", r));
  rmSync(dir, { recursive: true, force: true });
  const result = JSON.parse(out.trim().split("\n").pop()!) as { elapsedMs: number; cpuMs: number; failed: number };
  if (result.failed > 0) throw new Error(`bare sender: ${result.failed} failed POSTs`);
  return {
    rate: deliveries.length / (result.elapsedMs / 1000),
    cpuUsPerDelivery: (result.cpuMs * 1000) / deliveries.length,
  };
}

/**
 * From the first ingestion call until the gateway's worker (already running, default settings) has
 * recorded the outcome of every delivery: EVENTS events in calls of BATCH, each matching one
 * subscription (50 AWBs, one callback origin). Its CPU is the gateway process's over that window,
 * ingestion included (on PostgreSQL, not the database server's).
 */
export async function gatewayRate(
  env: Record<string, string>,
  callback: string,
  label: string,
): Promise<DeliveryRate & { ingestedMs: number }> {
  const gateway = await startGateway(GATEWAY, env);
  try {
    const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const awbs = Array.from({ length: 50 }, (_, i) => awbFor(i));
    for (const awb of awbs) {
      const res = await request(`${gateway.url}/carrier/handling/shipment/subscribe`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ awb, callback, states: "*" }),
      });
      if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${await res.body.text()}`);
      await res.body.dump();
    }
    const batches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) =>
      JSON.stringify(
        Array.from({ length: BATCH }, (_, k) => ({
          eventId: `b${b}-${k}`,
          awb: awbs[(b * BATCH + k) % awbs.length],
          state: "DEP",
        })),
      ),
    );
    await sleep(1_000);
    const started = performance.now();
    const cpuAtStart = processCpuMs(gateway.child.pid!);
    for (const body of batches) {
      const res = await request(`${gateway.url}/carrier/handling/shipment/events`, {
        method: "POST",
        headers: auth,
        body,
      });
      if (res.statusCode !== 202) throw new Error(`ingest: ${res.statusCode}`);
      await res.body.dump();
    }
    const ingestedAfter = performance.now() - started;
    for (;;) {
      const m = await metricsOf(gateway.url);
      if (
        (m.get('gateway_deliveries_total{outcome="delivered",kind="webhook"}') ?? 0) >= EVENTS &&
        m.get("gateway_delivery_queue_depth") === 0
      )
        break;
      await sleep(50);
    }
    const rate = EVENTS / ((performance.now() - started) / 1000);
    const cpuUsPerDelivery = ((processCpuMs(gateway.child.pid!) - cpuAtStart) * 1000) / EVENTS;
    console.log(
      `${label}: ${EVENTS} events ingested in ${(ingestedAfter / 1000).toFixed(2)} s and delivered in ${((performance.now() - started) / 1000).toFixed(2)} s → ${rate.toFixed(0)} deliveries/s, ${cpuUsPerDelivery.toFixed(0)} µs of CPU per delivery`,
    );
    return { rate, cpuUsPerDelivery, ingestedMs: ingestedAfter };
  } finally {
    gateway.child.kill("SIGTERM");
    await new Promise((r) => gateway.child.once("exit", r));
  }
}

async function main(): Promise<void> {
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const callback = `${receiver.url}/hook`;
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  // Defaults but for the key and secret it is given and callbacks to loopback (the receiver).
  const base = {
    BOOTSTRAP_API_KEY: KEY,
    BOOTSTRAP_SIGNING_SECRET: SECRET,
    ALLOW_PRIVATE_CALLBACKS: "true",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
  };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "cgw-bench-data-"));
  const bodies = sameShapedBodies();
  try {
    console.log(
      `bench:delivery — ${EVENTS} events in calls of ${BATCH}, one matching subscription each, one callback origin, ${PER_ORIGIN} in flight per origin; default settings, LOG_LEVEL=${base.LOG_LEVEL}`,
    );
    const rows: string[] = [];
    for (const backend of (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",") as Array<
      "postgres" | "embedded"
    >) {
      let env: Record<string, string>;
      if (backend === "postgres") {
        await admin.query('DROP DATABASE IF EXISTS "gw_bench_delivery" WITH (FORCE)');
        await admin.query('CREATE DATABASE "gw_bench_delivery"');
        const url = new URL(ADMIN);
        url.pathname = "/gw_bench_delivery";
        env = { ...base, DATABASE_URL: url.toString() };
      } else env = { ...base, DATA_DIR: dataDir };
      const gateway = await gatewayRate(env, callback, `gateway on ${backend}`);
      const bare = await bareRate(callback, bodies);
      console.log(
        `bare undici loop: ${bare.rate.toFixed(0)} deliveries/s, ${bare.cpuUsPerDelivery.toFixed(0)} µs of CPU per delivery`,
      );
      rows.push(
        `${backend}: gateway ${gateway.rate.toFixed(0)}/s, bare ${bare.rate.toFixed(0)}/s → ${(gateway.rate / bare.rate).toFixed(2)}x (target >= ${backend === "postgres" ? "0.5" : "0.4"}); CPU per delivery ${gateway.cpuUsPerDelivery.toFixed(0)} µs vs ${bare.cpuUsPerDelivery.toFixed(0)} µs → ${(gateway.cpuUsPerDelivery / bare.cpuUsPerDelivery).toFixed(1)}x`,
      );
    }
    for (const row of rows) console.log(row);

    // Event-to-callback latency with the gateway's own worker, at a steady trickle (embedded default).
    rmSync(dataDir, { recursive: true, force: true });
    const gateway = await startGateway(GATEWAY, {
      ...base,
      DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "cgw-bench-data-")),
    });
    try {
      const latencyReceiver = await import("node:http");
      const arrivals: number[] = [];
      const server = latencyReceiver.createServer((req, res) => {
        if (req.method === "OPTIONS") return void res.writeHead(204, { allow: "POST" }).end();
        let body = "";
        req.on("data", (c: Buffer) => (body += c.toString()));
        req.on("end", () => {
          arrivals.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp));
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const hook = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
      const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
      const awbs = Array.from({ length: 50 }, (_, i) => awbFor(100 + i));
      for (const awb of awbs)
        await (
          await request(`${gateway.url}/carrier/handling/shipment/subscribe`, {
            method: "POST",
            headers: auth,
            body: JSON.stringify({ awb, callback: hook, states: "*" }),
          })
        ).body.dump();
      const sent = 1_000;
      for (let i = 0; i < sent / 10; i++) {
        const body = JSON.stringify(
          Array.from({ length: 10 }, (_, k) => ({
            eventId: `lat-${i}-${k}`,
            awb: awbs[(i * 10 + k) % awbs.length],
            state: "ARR",
          })),
        );
        await (
          await request(`${gateway.url}/carrier/handling/shipment/events`, { method: "POST", headers: auth, body })
        ).body.dump();
        await sleep(20);
      }
      while (arrivals.length < sent) await sleep(5);
      console.log(
        `event-to-callback latency on the embedded default (${sent} events, 10 every ~20 ms): p50 ${percentile(arrivals, 0.5)} ms, p99 ${percentile(arrivals, 0.99)} ms`,
      );
      server.close();
    } finally {
      gateway.child.kill("SIGTERM");
      await new Promise((r) => gateway.child.once("exit", r));
    }
  } finally {
    await admin.query('DROP DATABASE IF EXISTS "gw_bench_delivery" WITH (FORCE)');
    await admin.end();
    receiver.child.kill("SIGTERM");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// bench:peers imports the pieces above; run as a script, this is bench:delivery.
if (require.main === module)
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
