// npm run bench:onerecord-notify — ONE Record notifications through the outbox against the webhook
// path, in the same gateway process, to the same receiver process, with the same number of milestones:
// on PostgreSQL and on the embedded default. The token endpoint is a process of its own.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "pg";
import { request } from "undici";
import { notificationBody } from "../../src/delivery/notification";
import { metricsOf, startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const ADMIN_CLI = path.resolve(__dirname, "../admin.js");
const RECEIVER = path.resolve(__dirname, "receiver.js");
const TOKEN_ENDPOINT = path.resolve(__dirname, "token-endpoint.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
/** Rounds of both paths per database, the order alternating (webhooks first in odd rounds). */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const BATCH = 500;
const AWBS = 50;
const KEY = "cgw_bench-admin-key-000000000004";
const API = "https://onerecord.iata.org/ns/api#";

type Kind = "webhook" | "onerecord";

const awbFor = (i: number) => {
  const serial = String(5_000_000 + i);
  return `020-${serial}${Number(serial) % 7}`;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const auth = { authorization: `Bearer ${KEY}` };

async function call(url: string, body: unknown, contentType = "application/json"): Promise<number> {
  const res = await request(url, {
    method: "POST",
    headers: { ...auth, "content-type": contentType, accept: "application/ld+json" },
    body: JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${text}`);
  return res.statusCode;
}

/**
 * The gateway's client (the bootstrap one, every scope) is registered as a ONE Record partner whose
 * server is the receiver's `/1r`: its subscriptions' notifications go to `/1r/notifications`. Done with
 * the admin command line before the gateway starts (the embedded database takes one process at a time).
 */
function registerPartner(env: Record<string, string>, server: string): string {
  const run = (...args: string[]) =>
    execFileSync(process.execPath, [ADMIN_CLI, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env, LOG_LEVEL: "warn" },
      encoding: "utf8",
    });
  const listed = run("clients");
  const clientId = /^([0-9a-f-]{36}) {2}bootstrap/m.exec(listed)?.[1];
  if (clientId === undefined) throw new Error(`no bootstrap client in:\n${listed}`);
  run("partner:add", "--server", server, "--client", clientId);
  return clientId;
}

/**
 * One phase: AWBS new AWBs, each given its first milestone (its ONE Record objects written) and then a
 * subscription of `kind`; then EVENTS milestones in calls of BATCH, each matching one subscription.
 * Timed from the first ingestion call until `/metrics` counts every delivery of the phase delivered and
 * the queue is empty.
 */
async function phase(url: string, kind: Kind, receiver: string, clientId: string): Promise<number> {
  const awbs = Array.from({ length: AWBS }, (_, i) => awbFor(i));
  for (const awb of awbs) {
    await call(`${url}/carrier/handling/shipment/events`, { awb, state: "RCS", eventId: `first-${awb}` });
    if (kind === "webhook")
      await call(`${url}/carrier/handling/shipment/subscribe`, { awb, callback: `${receiver}/hook`, states: "*" });
    else
      await call(
        `${url}/onerecord/subscriptions`,
        {
          "@context": { api: API },
          "@type": "api:Subscription",
          "api:hasSubscriber": { "@id": `${url}/onerecord/logistics-objects/organization-${clientId}` },
          "api:hasTopicType": { "@id": "api:LOGISTICS_OBJECT_IDENTIFIER" },
          "api:hasTopic": {
            "@type": "http://www.w3.org/2001/XMLSchema#anyURI",
            "@value": `${url}/onerecord/logistics-objects/shipment-${awb}`,
          },
          "api:includeSubscriptionEventType": { "@id": "api:LOGISTICS_EVENT_RECEIVED" },
        },
        "application/ld+json",
      );
  }
  const batches = Array.from({ length: Math.ceil(EVENTS / BATCH) }, (_, b) =>
    Array.from({ length: BATCH }, (_, k) => ({
      eventId: `${kind}-${b}-${k}`,
      awb: awbs[(b * BATCH + k) % awbs.length],
      state: "DEP",
    })),
  );
  const metric = `gateway_deliveries_total{outcome="delivered",kind="${kind}"}`;
  const before = (await metricsOf(url)).get(metric) ?? 0;
  await sleep(1_000);
  const started = performance.now();
  for (const batch of batches) await call(`${url}/carrier/handling/shipment/events`, batch);
  const ingested = performance.now() - started;
  for (;;) {
    const m = await metricsOf(url);
    if ((m.get(metric) ?? 0) - before >= EVENTS && m.get("gateway_delivery_queue_depth") === 0) break;
    await sleep(50);
  }
  const elapsed = performance.now() - started;
  const rate = EVENTS / (elapsed / 1000);
  console.log(
    `  ${kind.padEnd(9)} ${EVENTS} milestones ingested in ${(ingested / 1000).toFixed(2)} s, delivered in ${(elapsed / 1000).toFixed(2)} s → ${rate.toFixed(0)}/s`,
  );
  return rate;
}

/** The size of a ONE Record notification the gateway sent (its payload as stored), through the operators' GraphQL. */
async function oneRecordBodySize(url: string): Promise<number> {
  const res = await request(`${url}/graphql`, {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ query: '{ oneRecordDeliveries(first: 1, status: "DELIVERED") { payload } }' }),
  });
  const body = (await res.body.json()) as { data?: { oneRecordDeliveries: Array<{ payload: string }> } };
  const payload = body.data?.oneRecordDeliveries[0]?.payload;
  if (payload === undefined) throw new Error(`no ONE Record delivery: ${JSON.stringify(body)}`);
  return Buffer.byteLength(payload);
}

async function main(): Promise<void> {
  const receiver = await startProcess(RECEIVER, [], {}, "receiver listening");
  const tokens = await startProcess(TOKEN_ENDPOINT, [], {}, "token endpoint listening");
  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  const base = {
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
    ONE_RECORD_TOKEN_URL: `${tokens.url}/token`,
    ONE_RECORD_CLIENT_ID: "bench-gateway",
    ONE_RECORD_CLIENT_SECRET: "bench-secret",
  };
  const webhookBody = Buffer.byteLength(
    notificationBody({
      subscriptionId: "7b3c1f0e-9a41-4a55-9d3e-2a7f54c1e0aa",
      awb: awbFor(0),
      state: "DEP",
      toaTimestamp: null,
      receivedAt: new Date(),
    }),
  );
  const dataDirs: string[] = [];
  const sizes = new Set<number>();
  /** A fresh database, the partner registered, a gateway started on it: one phase, then the gateway stopped. */
  async function measure(backend: "postgres" | "embedded", kind: Kind): Promise<number> {
    let env: Record<string, string>;
    if (backend === "postgres") {
      await admin.query('DROP DATABASE IF EXISTS "gw_bench_notify" WITH (FORCE)');
      await admin.query('CREATE DATABASE "gw_bench_notify"');
      const url = new URL(ADMIN);
      url.pathname = "/gw_bench_notify";
      env = { ...base, DATABASE_URL: url.toString() };
    } else {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), "cgw-bench-notify-"));
      dataDirs.push(dataDir);
      env = { ...base, DATA_DIR: dataDir };
    }
    const clientId = registerPartner(env, `${receiver.url}/1r`);
    const gateway = await startGateway(GATEWAY, env);
    try {
      const rate = await phase(gateway.url, kind, receiver.url, clientId);
      if (kind === "onerecord") sizes.add(await oneRecordBodySize(gateway.url));
      return rate;
    } finally {
      gateway.child.kill("SIGTERM");
      await new Promise((r) => gateway.child.once("exit", r));
    }
  }

  const rows: string[] = [];
  try {
    console.log(
      `bench:onerecord-notify — per phase ${EVENTS} milestones in calls of ${BATCH} over ${AWBS} AWBs, one subscription each (a webhook, or a ONE Record subscription), one receiver process, each phase on a new database and gateway; ${ROUNDS} rounds per database, alternating which path goes first; default settings but RATE_LIMIT_PER_SECOND=0, LOG_LEVEL=${base.LOG_LEVEL}`,
    );
    for (const backend of (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",") as Array<
      "postgres" | "embedded"
    >) {
      console.log(`${backend}:`);
      const rates: Record<Kind, number[]> = { webhook: [], onerecord: [] };
      for (let round = 0; round < ROUNDS; round++) {
        const order: Kind[] = round % 2 === 0 ? ["webhook", "onerecord"] : ["onerecord", "webhook"];
        for (const kind of order) rates[kind].push(await measure(backend, kind));
      }
      const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
      const ratios = rates.onerecord.map((rate, i) => rate / rates.webhook[i]!);
      rows.push(
        `${backend}: ONE Record ${mean(rates.onerecord).toFixed(0)}/s, webhooks ${mean(rates.webhook).toFixed(0)}/s (mean of ${ROUNDS}) → ${(mean(rates.onerecord) / mean(rates.webhook)).toFixed(2)}x (per round ${ratios.map((r) => r.toFixed(2)).join(", ")}; target >= 0.8)`,
      );
    }
    for (const row of rows) console.log(row);
    console.log(`bodies: ONE Record ${[...sizes].join(", ")} bytes, webhook ${webhookBody} bytes`);
  } finally {
    await admin.query('DROP DATABASE IF EXISTS "gw_bench_notify" WITH (FORCE)');
    await admin.end();
    receiver.child.kill("SIGTERM");
    tokens.child.kill("SIGTERM");
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
