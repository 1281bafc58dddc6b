// npm run bench:subscriptions — create/get/update/delete through the REST routes (create verifying
// its callback with OPTIONS against a local receiver) next to raw `pg` statements doing the same
// writes, at the same concurrency, in the same run, on the same PostgreSQL.
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { Client, Pool } from "pg";
import { Pool as HttpPool } from "undici";
import { startGateway } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const ADMIN = process.env.TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const OPERATIONS = Number(process.env.BENCH_OPERATIONS ?? 3_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 20);
const KEY = "cgw_bench-admin-key-000000000001";

interface Measured {
  name: string;
  perSecond: number;
  p50: number;
  p99: number;
}

/** Runs `operation(i)` for i in 0..n-1 with `concurrency` in flight; per-operation latency in ms. */
async function measure(
  name: string,
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
  const result = { name, perSecond: n / seconds, p50: at(0.5), p99: at(0.99) };
  console.log(
    `${name.padEnd(44)} ${result.perSecond.toFixed(0).padStart(7)} op/s   p50 ${result.p50.toFixed(1).padStart(6)} ms   p99 ${result.p99.toFixed(1).padStart(6)} ms`,
  );
  return result;
}

const awbFor = (i: number) => {
  const serial7 = String(1_000_000 + i).padStart(7, "0");
  return `020-${serial7}${Number(serial7) % 7}`;
};

async function main(): Promise<void> {
  const receiver = http.createServer((req, res) =>
    res.writeHead(204, req.method === "OPTIONS" ? { allow: "POST, OPTIONS" } : {}).end(),
  );
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  const callbackBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

  const admin = new Client({ connectionString: ADMIN });
  await admin.connect();
  await admin.query('DROP DATABASE IF EXISTS "gw_bench" WITH (FORCE)');
  await admin.query('CREATE DATABASE "gw_bench"');
  const url = new URL(ADMIN);
  url.pathname = "/gw_bench";

  const gateway = await startGateway(GATEWAY, {
    DATABASE_URL: url.toString(),
    BOOTSTRAP_API_KEY: KEY,
    ALLOW_PRIVATE_CALLBACKS: "true",
    RATE_LIMIT_PER_SECOND: "0",
  });
  const api = new HttpPool(gateway.url, { connections: CONCURRENCY });
  const pg = new Pool({ connectionString: url.toString(), max: 10 });
  const base = "/carrier/handling/shipment/subscribe";
  const headers = { authorization: `Bearer ${KEY}`, "content-type": "application/json" };
  const call = async (method: "POST" | "GET" | "PUT" | "DELETE", path: string, body: unknown, expected: number) => {
    const res = await api.request({
      method,
      path,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    if (res.statusCode !== expected) throw new Error(`${method} ${path}: ${res.statusCode} ${text}`);
    return text;
  };
  const {
    rows: [client],
  } = await pg.query<{ id: string }>("SELECT id FROM client LIMIT 1");

  console.log(
    `bench:subscriptions — ${OPERATIONS} operations per measurement, ${CONCURRENCY} in flight, PostgreSQL ${url.host}`,
  );
  try {
    const ids: string[] = [];
    const create = await measure("REST create (incl. OPTIONS check)", OPERATIONS, CONCURRENCY, async (i) => {
      const created = JSON.parse(
        await call("POST", base, { awb: awbFor(i), callback: `${callbackBase}/${i}`, states: "DEP,ARR" }, 201),
      ) as { subscriptionId: string };
      ids[i] = created.subscriptionId;
    });
    const rawIds: string[] = [];
    const rawCreate = await measure("raw pg INSERT", OPERATIONS, CONCURRENCY, async (i) => {
      const { rows } = await pg.query<{ id: string }>(
        "INSERT INTO subscription (id, client_id, awb, callback, states, updated_at) VALUES (gen_random_uuid(), $1, $2, $3, $4, now()) RETURNING id",
        [client!.id, awbFor(i), `${callbackBase}/raw/${i}`, ["DEP", "ARR"]],
      );
      rawIds[i] = rows[0]!.id;
    });
    const get = await measure(
      "REST get",
      OPERATIONS,
      CONCURRENCY,
      async (i) => void (await call("GET", `${base}/${ids[i]}`, undefined, 200)),
    );
    const rawGet = await measure("raw pg SELECT by id and client", OPERATIONS, CONCURRENCY, async (i) => {
      await pg.query("SELECT id, awb, callback, states FROM subscription WHERE id = $1 AND client_id = $2", [
        rawIds[i],
        client!.id,
      ]);
    });
    const update = await measure("REST update (same callback)", OPERATIONS, CONCURRENCY, async (i) => {
      await call("PUT", `${base}/${ids[i]}`, { AWB: awbFor(i), Callback: `${callbackBase}/${i}`, States: "*" }, 200);
    });
    const rawUpdate = await measure("raw pg UPDATE", OPERATIONS, CONCURRENCY, async (i) => {
      await pg.query("UPDATE subscription SET states = $1, updated_at = now() WHERE id = $2 AND client_id = $3", [
        ["*"],
        rawIds[i],
        client!.id,
      ]);
    });
    const remove = await measure(
      "REST delete",
      OPERATIONS,
      CONCURRENCY,
      async (i) => void (await call("DELETE", `${base}/${ids[i]}`, undefined, 204)),
    );
    const rawRemove = await measure("raw pg DELETE", OPERATIONS, CONCURRENCY, async (i) => {
      await pg.query("DELETE FROM subscription WHERE id = $1 AND client_id = $2", [rawIds[i], client!.id]);
    });
    const r = (a: Measured, b: Measured) => (a.perSecond / b.perSecond).toFixed(2);
    console.log("\nratios (operations per second, REST / raw pg):");
    console.log(`  create   ${r(create, rawCreate)}  (target >= 0.3)`);
    console.log(`  get      ${r(get, rawGet)}  (target >= 0.5)`);
    console.log(`  update   ${r(update, rawUpdate)}`);
    console.log(`  delete   ${r(remove, rawRemove)}`);
  } finally {
    gateway.child.kill("SIGTERM");
    await api.close();
    await pg.end();
    await new Promise((resolve) => gateway.child.once("exit", resolve));
    await admin.query('DROP DATABASE IF EXISTS "gw_bench" WITH (FORCE)');
    await admin.end();
    receiver.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
