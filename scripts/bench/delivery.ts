// npm run bench:delivery — ingestion and delivery throughput, each next to a bare baseline in the
// same run, and event-to-callback latency. Gateway and worker run as their own processes on PostgreSQL.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client, Pool } from "pg";
import { request, Pool as HttpPool } from "undici";
import { signWebhook } from "../../src/delivery/notification";
import { startGateway } from "./harness";
import { spawn } from "node:child_process";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const WORKER = path.resolve(__dirname, "../../src/worker.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const BATCH = 500;
const KEY = "cgw_bench-admin-key-000000000002";
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYo=";
const PER_ORIGIN = 8;

const awbFor = (i: number) => {
  const serial = String(3_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
};
const percentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

async function main(): Promise<void> {
  // The receiver: counts POSTs and notes when each arrived.
  let received = 0;
  const arrivals: Array<{ at: number; body: string }> = [];
  let recordArrivals = false;
  const receiver = http.createServer((req, res) => {
    if (req.method === "OPTIONS") return void res.writeHead(204, { allow: "POST" }).end();
    let body = "";
    req.on("data", (c: Buffer) => (body += c));
    req.on("end", () => {
      received++;
      if (recordArrivals) arrivals.push({ at: Date.now(), body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const callback = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS "gw_bench_delivery" WITH (FORCE)');
  await admin.query('CREATE DATABASE "gw_bench_delivery"');
  const url = new URL(ADMIN);
  url.pathname = "/gw_bench_delivery";
  const env = { DATABASE_URL: url.toString(), BOOTSTRAP_API_KEY: KEY, BOOTSTRAP_SIGNING_SECRET: SECRET, ALLOW_PRIVATE_CALLBACKS: "true", RATE_LIMIT_PER_SECOND: "0", DELIVERY_PER_ORIGIN: String(PER_ORIGIN) };
  const pg = new Pool({ connectionString: url.toString(), max: 4 });
  const waitFor = async (predicate: () => boolean) => {
    while (!predicate()) await new Promise((r) => setTimeout(r, 5));
  };

  console.log(`bench:delivery — ${EVENTS} events in batches of ${BATCH}, one matching subscription each; ${PER_ORIGIN} deliveries in flight per origin`);
  let gateway = await startGateway(GATEWAY, { ...env, DELIVERY_WORKER: "false" });
  try {
    const auth = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
    const awbs = Array.from({ length: 50 }, (_, i) => awbFor(i));
    for (const awb of awbs) {
      const res = await request(`${gateway.url}/carrier/handling/shipment/subscribe`, { method: "POST", headers: auth, body: JSON.stringify({ awb, callback, states: "*" }) });
      if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${await res.body.text()}`);
      await res.body.dump();
    }
    const batches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) =>
      JSON.stringify(Array.from({ length: BATCH }, (_, k) => ({ eventId: `b${b}-${k}`, awb: awbs[(b * BATCH + k) % awbs.length], state: "DEP" }))),
    );

    // 1. Ingestion: the gateway (validation, transaction with events and deliveries) …
    let t = performance.now();
    for (const body of batches) {
      const res = await request(`${gateway.url}/carrier/handling/shipment/events`, { method: "POST", headers: auth, body });
      if (res.statusCode !== 202) throw new Error(`ingest: ${res.statusCode}`);
      await res.body.dump();
    }
    const ingestRate = EVENTS / ((performance.now() - t) / 1000);
    // … next to raw pg inserting the same rows (an event and its delivery) in the same batches.
    const { rows: subs } = await pg.query<{ id: string; client_id: string; awb: string }>("SELECT id, client_id, awb FROM subscription");
    const byAwb = new Map(subs.map((s) => [s.awb, s]));
    t = performance.now();
    for (let b = 0; b < batches.length; b++) {
      const events = Array.from({ length: BATCH }, (_, k) => ({ key: `raw-${b}-${k}`, awb: awbs[(b * BATCH + k) % awbs.length]! }));
      const client = await pg.connect();
      try {
        await client.query("BEGIN");
        const { rows } = await client.query<{ id: string; awb: string; received_at: Date }>(
          `INSERT INTO status_event (id, dedupe_key, awb, state, occurred_at, received_at) SELECT gen_random_uuid(), k, a, 'DEP', now(), now() FROM unnest($1::text[], $2::text[]) AS t(k, a) ON CONFLICT DO NOTHING RETURNING id, awb, received_at`,
          [events.map((e) => e.key), events.map((e) => e.awb)],
        );
        await client.query(
          `INSERT INTO delivery (id, event_id, subscription_id, client_id, callback, origin, payload, status, next_attempt_at)
           SELECT gen_random_uuid(), e, s, c, $4, 'raw', p, 'DELIVERED', now() FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $5::text[]) AS t(e, s, c, p)`,
          [rows.map((r) => r.id), rows.map((r) => byAwb.get(r.awb)!.id), rows.map((r) => byAwb.get(r.awb)!.client_id), callback, rows.map((r) => JSON.stringify({ subscriptionId: byAwb.get(r.awb)!.id, AWB: r.awb, State: "DEP", toaTimestamp: null, timestamp: r.received_at.toISOString() }))],
        );
        await client.query("COMMIT");
      } finally {
        client.release();
      }
    }
    const rawIngestRate = EVENTS / ((performance.now() - t) / 1000);
    console.log(`ingestion: gateway ${ingestRate.toFixed(0)} events/s, raw pg ${rawIngestRate.toFixed(0)} events/s → ${(ingestRate / rawIngestRate).toFixed(2)}x (target >= 0.3)`);

    // 2. Delivery of the backlog by a worker process …
    const { rows: payloads } = await pg.query<{ id: string; payload: string }>("SELECT id, payload FROM delivery WHERE status = 'PENDING'");
    received = 0;
    t = performance.now();
    const worker = spawn(process.execPath, [WORKER], { env: { PATH: process.env.PATH ?? "", LOG_LEVEL: "warn", DELIVERY_POLL_MS: "20", ...env }, stdio: "inherit" });
    await waitFor(() => received >= EVENTS);
    const deliveryRate = EVENTS / ((performance.now() - t) / 1000);
    worker.kill("SIGTERM");
    await new Promise((r) => worker.once("exit", r));
    // … next to a bare undici loop posting the same signed bodies at the same concurrency.
    received = 0;
    const pool = new HttpPool(new URL(callback).origin, { connections: PER_ORIGIN });
    let next = 0;
    t = performance.now();
    await Promise.all(
      Array.from({ length: PER_ORIGIN }, async () => {
        while (next < payloads.length) {
          const d = payloads[next++]!;
          const ts = Math.floor(Date.now() / 1000);
          const res = await pool.request({ method: "POST", path: "/hook", body: d.payload, headers: { "content-type": "application/json", "webhook-id": d.id, "webhook-timestamp": String(ts), "webhook-signature": signWebhook(SECRET, d.id, ts, d.payload) } });
          await res.body.dump();
        }
      }),
    );
    const bareRate = payloads.length / ((performance.now() - t) / 1000);
    await pool.close();
    console.log(`delivery: worker ${deliveryRate.toFixed(0)}/s, bare undici loop ${bareRate.toFixed(0)}/s → ${(deliveryRate / bareRate).toFixed(2)}x (target >= 0.5)`);

    // 3. Event-to-callback latency with the gateway's own worker, at a steady trickle.
    gateway.child.kill("SIGTERM");
    await new Promise((r) => gateway.child.once("exit", r));
    gateway = await startGateway(GATEWAY, env);
    received = 0;
    recordArrivals = true;
    const sent = 1_000;
    for (let i = 0; i < sent / 10; i++) {
      const body = JSON.stringify(Array.from({ length: 10 }, (_, k) => ({ eventId: `lat-${i}-${k}`, awb: awbs[(i * 10 + k) % awbs.length], state: "ARR" })));
      const res = await request(`${gateway.url}/carrier/handling/shipment/events`, { method: "POST", headers: auth, body });
      await res.body.dump();
      await new Promise((r) => setTimeout(r, 20));
    }
    await waitFor(() => received >= sent);
    const latencies = arrivals.map((a) => a.at - Date.parse(JSON.parse(a.body).timestamp));
    console.log(`event-to-callback latency (${sent} events, 10 every ~20 ms): p50 ${percentile(latencies, 0.5)} ms, p99 ${percentile(latencies, 0.99)} ms`);
  } finally {
    gateway.child.kill("SIGTERM");
    await new Promise((r) => gateway.child.once("exit", r));
    await pg.end();
    await admin.query('DROP DATABASE IF EXISTS "gw_bench_delivery" WITH (FORCE)');
    await admin.end();
    receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
