import { type ChildProcess, spawn } from "node:child_process";
import net from "node:net";
import readline from "node:readline";
import autocannon from "autocannon";
import { Client } from "pg";

export interface Result {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

/** Starts a Node script as its own process and resolves with the URL from its "listening" log line. */
export async function startProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  listenMsg: string,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [script, ...args], {
    env: { PATH: process.env.PATH ?? "", ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === listenMsg && entry.url) resolve(entry.url);
      } catch {
        // not JSON
      }
    });
    child.on("exit", (code) => reject(new Error(`${script} exited with ${code} before listening`)));
  });
  return { url, child };
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the gateway (dist/src/main.js) and waits for /readyz. It runs with the settings a user gets
 * by default (LOG_LEVEL info, so one access line per request) unless `env` says otherwise. Its log goes
 * through a pipe to a reader of its own (`cat` into /dev/null), as a supervisor reads a service's
 * standard output; BENCH_VERBOSE=1 shows it instead.
 */
export async function startGateway(
  script: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  // BENCH_CPU_PROF=<dir>: a CPU profile of each gateway run, written there on exit.
  const profile = process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  // BENCH_NODE_ARGS="<flags>": Node or V8 flags for each gateway run, to compare one against the default.
  const extra = (process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const reader = process.env.BENCH_VERBOSE ? undefined : spawn("cat", [], { stdio: ["pipe", "ignore", "inherit"] });
  const child = spawn(process.execPath, [...profile, ...extra, ...nodeArgs, script], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port), ...env },
    stdio: ["ignore", reader ? reader.stdin : "inherit", "inherit"],
  });
  // The pipe's write end belongs to the gateway now; the reader ends when the gateway does.
  reader?.stdin.destroy();
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`gateway exited with ${child.exitCode}`);
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { url, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("gateway did not become ready");
}

export const DURATION_S = Number(process.env.BENCH_DURATION ?? 10);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

/** One autocannon run with the settings every measurement of a benchmark shares. */
export async function load(
  name: string,
  options: { url: string; method?: "GET" | "POST"; body?: string; headers?: Record<string, string> },
  connections = CONNECTIONS,
): Promise<Result> {
  // A short warm-up so JIT and caches are hot before the measured run.
  await autocannon({ ...options, connections, duration: 2, timeout: 30 });
  const r = await autocannon({ ...options, connections, duration: DURATION_S, timeout: 30 });
  const result = {
    name,
    requestsPerSecond: r.requests.average,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors,
  };
  console.log(
    `${name.padEnd(48)} ${result.requestsPerSecond.toFixed(0).padStart(8)} req/s   p50 ${String(result.p50Ms).padStart(4)} ms   p99 ${String(result.p99Ms).padStart(4)} ms   non-2xx ${result.non2xx}`,
  );
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the measurement is void`);
  return result;
}

export function ratio(measured: Result, baseline: Result): string {
  return (measured.requestsPerSecond / baseline.requestsPerSecond).toFixed(2);
}

/** The gateway's /metrics as name{labels} → value. */
export async function metricsOf(url: string): Promise<Map<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return new Map(
    text
      .split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"))
      .map((l) => [l.slice(0, l.lastIndexOf(" ")), Number(l.slice(l.lastIndexOf(" ") + 1))]),
  );
}

/** An AWB number with a valid check digit (serial mod 7), from a seven-digit serial. */
export const awbWithCheckDigit = (serial: number): string => `020-${serial}${serial % 7}`;

/** The POSTs the bench receiver (receiver.ts) has counted so far. */
export async function receivedPosts(receiverUrl: string): Promise<number> {
  const res = await fetch(`${receiverUrl}/count`);
  return ((await res.json()) as { posts: number }).posts;
}

/** One subscription per AWB (states `*`) to `callback`, through the gateway's REST route. */
export async function subscribeEach(gatewayUrl: string, key: string, awbs: string[], callback: string): Promise<void> {
  for (const awb of awbs) {
    const res = await fetch(`${gatewayUrl}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ awb, callback, states: "*" }),
    });
    if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  }
}

/** A new, empty database `name` on the server `admin` is connected to (dropped first if there); its URL. */
export async function freshPostgresDatabase(
  admin: { query: (text: string) => Promise<unknown> },
  adminUrl: string,
  name: string,
): Promise<string> {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * PostgreSQL's default `autovacuum = on` for the length of a benchmark, on a server set otherwise
 * (this machine's is off), since docs/DEPLOYMENT.md requires it of a server the gateway runs on;
 * `BENCH_PG_AUTOVACUUM=server` leaves the server's setting as it is. It changes the whole server
 * (`ALTER SYSTEM`): run no tests against it meanwhile. Answers a function that puts back what
 * `postgresql.auto.conf` held (call it in a `finally`; a benchmark killed before it leaves the setting
 * on). Throws if the server does not take it (a setting given on its command line wins).
 */
export async function serverDefaultAutovacuum(admin: {
  query: <R extends object>(text: string) => Promise<{ rows: R[] }>;
}): Promise<() => Promise<void>> {
  const setting = async () =>
    (
      await admin.query<{ setting: string; source: string; sourcefile: string | null }>(
        "SELECT setting, source, sourcefile FROM pg_settings WHERE name = 'autovacuum'",
      )
    ).rows[0]!;
  const before = await setting();
  if (process.env.BENCH_PG_AUTOVACUUM === "server" || before.setting === "on") {
    console.log(`postgres: autovacuum ${before.setting} (the server's setting)`);
    return async () => {};
  }
  // A role that may not read settings' files sees no sourcefile: where to put back would be a guess.
  if (before.source === "configuration file" && before.sourcefile === null)
    throw new Error(
      "postgres: cannot tell where autovacuum is set (run as a superuser, or BENCH_PG_AUTOVACUUM=server)",
    );
  const fromAutoConf = before.sourcefile?.endsWith("postgresql.auto.conf") ?? false;
  const putBack = async () => {
    await admin.query(
      fromAutoConf ? `ALTER SYSTEM SET autovacuum = ${before.setting}` : "ALTER SYSTEM RESET autovacuum",
    );
    await admin.query("SELECT pg_reload_conf()");
  };
  await admin.query("ALTER SYSTEM SET autovacuum = on");
  await admin.query("SELECT pg_reload_conf()");
  for (let i = 0; i < 50 && (await setting()).setting !== "on"; i++) await new Promise((r) => setTimeout(r, 100));
  if ((await setting()).setting !== "on") {
    await putBack();
    throw new Error("postgres: the server did not take autovacuum = on (set on its command line?)");
  }
  console.log(`postgres: autovacuum ${before.setting} on this server; on (PostgreSQL's default) for this run`);
  return putBack;
}

/**
 * When `delivery` was last analysed — by autovacuum, or by the gateway (db/table-upkeep.ts) — and how
 * many rows the planner then counted: a claim's plan rests on it, and a table that filled up faster
 * than autovacuum looked at it is planned as a small one unless the gateway analysed it.
 */
export async function plannerStatistics(databaseUrl: string): Promise<string> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{
      auto: Date | null;
      own: Date | null;
      autoCount: string;
      ownCount: string;
      vacuums: string;
      reltuples: number;
      live: string;
    }>(
      `SELECT s.last_autoanalyze AS auto, s.last_analyze AS own, s.autoanalyze_count::text AS "autoCount",
         s.analyze_count::text AS "ownCount", s.autovacuum_count::text AS vacuums, c.reltuples, s.n_live_tup::text AS live
       FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'delivery'`,
    );
    const row = rows[0];
    if (!row) return "delivery: no statistics";
    const ago = (at: Date | null) => (at ? `${((Date.now() - at.getTime()) / 1_000).toFixed(0)} s ago` : "never");
    return `delivery analysed by autovacuum ${row.autoCount}× (last ${ago(row.auto)}), by the gateway ${row.ownCount}× (last ${ago(row.own)}), vacuumed by autovacuum ${row.vacuums}×; the planner counts ${row.reltuples} rows (${row.live} live now)`;
  } finally {
    await client.end();
  }
}
