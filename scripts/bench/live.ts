// npm run bench:live — live fan-out of milestones over graphql-ws.
//   1. 10,000 websockets subscribed (awbStatusChanged) to one hot AWB: publish-to-receipt p99 of a
//      milestone ingested over HTTP, next to a bare `ws` server (its own process) broadcasting the
//      very same frame to the same number of sockets; resident memory per idle subscriber on both.
//      Memory is read by a probe in each server after forced collections (memory-probe.ts).
//   2. The same hot measurement with 50,000 idle subscriptions on other AWBs (500 sockets × 100).
// Each p99 is the median over ROUNDS events. The gateway runs with default settings except the
// per-key socket cap and rate limit, lifted because one bench key stands for thousands of dashboards.
import { type ChildProcess, execFileSync } from "node:child_process";
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { metricsOf, startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "bare-ws-server.js");
const MEMORY_PROBE = path.resolve(__dirname, "memory-probe.js");
/** BENCH_LIVE_MEMORY_ONLY=1: only the memory per idle subscriber, without the fan-out rounds. */
const MEMORY_ONLY = process.env.BENCH_LIVE_MEMORY_ONLY === "1";
const HOT = Number(process.env.BENCH_SOCKETS ?? 10_000);
const IDLE_SOCKETS = Number(process.env.BENCH_IDLE_SOCKETS ?? 500);
const PER_IDLE_SOCKET = 100;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const KEY = "cgw_bench-admin-key-000000000003";
const HOT_AWB = "020-12345675";
const QUERY = `subscription($a: String!) { awbStatusChanged(awb: $a) { eventId sequence awb state timestamp station } }`;

const rssKb = (pid: number) =>
  Number(
    execFileSync("ps", ["-o", "rss=", "-p", String(pid)])
      .toString()
      .trim(),
  );
/** The environment that preloads memory-probe.ts into a server, reporting to its own file. */
const probed = (name: string) => {
  const file = path.join(os.tmpdir(), `bench-live-memory-${process.pid}-${name}.json`);
  const snapshots: Record<string, string> = process.env.BENCH_HEAP_SNAPSHOTS
    ? { BENCH_HEAP_SNAPSHOTS: process.env.BENCH_HEAP_SNAPSHOTS }
    : {};
  const env: Record<string, string> = { NODE_OPTIONS: `--require ${MEMORY_PROBE}`, BENCH_MEMORY_FILE: file };
  return { file, env: { ...env, ...snapshots } };
};
interface Memory {
  rss: number;
  heapUsed: number;
  external: number;
}
/** The server's memory after two forced collections, read by its own probe. */
async function memoryOf(child: ChildProcess, file: string): Promise<Memory> {
  if (existsSync(file)) unlinkSync(file);
  child.kill("SIGUSR2");
  while (!existsSync(file)) await sleep(20);
  await sleep(20); // the probe writes the file in one call; let it finish
  const memory = JSON.parse(readFileSync(file, "utf8")) as Memory;
  unlinkSync(file);
  return memory;
}
/** Per subscriber, in KiB: resident set without collecting (as sessions 2–3 read it), and after collecting. */
function perSubscriber(idle: { rssKb: number; probe: Memory }, loaded: { rssKb: number; probe: Memory }) {
  const per = (bytes: number) => bytes / HOT / 1024;
  return {
    rssRaw: per((loaded.rssKb - idle.rssKb) * 1024),
    rss: per(loaded.probe.rss - idle.probe.rss),
    heap: per(loaded.probe.heapUsed - idle.probe.heapUsed),
    external: per(loaded.probe.external - idle.probe.external),
  };
}
const percentile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const median = (values: number[]) => percentile(values, 0.5);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens `count` sockets, at most 200 handshakes at a time; `onOpen` runs the per-socket protocol. */
async function openSockets(
  count: number,
  url: string,
  protocol: string | undefined,
  onOpen: (socket: WebSocket, i: number) => Promise<void>,
): Promise<WebSocket[]> {
  const sockets: WebSocket[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < count) {
        const i = next++;
        const socket = protocol ? new WebSocket(url, protocol) : new WebSocket(url);
        await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
        await onOpen(socket, i);
        sockets.push(socket);
      }
    }),
  );
  return sockets;
}

/** Receipt times (ms after t0) of one frame on every hot socket. */
function receipts(sockets: WebSocket[]) {
  let t0 = 0;
  let times: number[] = [];
  for (const s of sockets) s.on("message", () => times.push(performance.now() - t0));
  return {
    async measure(trigger: () => Promise<unknown>): Promise<number> {
      times = [];
      t0 = performance.now();
      await trigger();
      while (times.length < sockets.length) await sleep(2);
      return percentile(times, 0.99);
    },
  };
}

const gatewayMetric = async (url: string, name: string) => (await metricsOf(url)).get(name) ?? NaN;

async function main(): Promise<void> {
  console.log(
    `bench:live — ${HOT} sockets on one hot AWB; then with ${IDLE_SOCKETS * PER_IDLE_SOCKET} idle subscriptions on other AWBs; p99 = median of ${ROUNDS} events`,
  );
  const subscribe = (socket: WebSocket) =>
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: QUERY, variables: { a: HOT_AWB } } }));
  const handshake = async (socket: WebSocket) => {
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${KEY}` } }));
    await new Promise((resolve) => socket.once("message", resolve));
  };
  // 1. The gateway.
  const gatewayProbe = probed("gateway");
  const gateway = await startGateway(GATEWAY, {
    DATA_DIR: "memory://",
    BOOTSTRAP_API_KEY: KEY,
    RATE_LIMIT_PER_SECOND: "0",
    LIVE_MAX_CONNECTIONS_PER_KEY: "1000000",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
    ...gatewayProbe.env,
  });
  const wsUrl = `${gateway.url.replace("http", "ws")}/graphql`;
  await sleep(2_000);
  const gatewayIdle = { rssKb: rssKb(gateway.child.pid!), probe: await memoryOf(gateway.child, gatewayProbe.file) };
  let frame = "";
  const hot = await openSockets(HOT, wsUrl, "graphql-transport-ws", async (socket) => {
    await handshake(socket);
    subscribe(socket);
  });
  hot[0]!.on("message", (data: Buffer) => (frame = data.toString()));
  while ((await gatewayMetric(gateway.url, "gateway_live_subscriptions")) < HOT) await sleep(100);
  await sleep(2_000);
  const gatewayLoaded = { rssKb: rssKb(gateway.child.pid!), probe: await memoryOf(gateway.child, gatewayProbe.file) };
  const hotTimes = receipts(hot);
  let n = 0;
  const ingest = () =>
    fetch(`${gateway.url}/carrier/handling/shipment/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ awb: HOT_AWB, state: "DEP", station: "FRA", eventId: `live-${++n}` }),
    }).then((r) => r.text());
  const alone: number[] = [];
  const crowded: number[] = [];
  const idle: WebSocket[] = [];
  if (!MEMORY_ONLY) {
    await hotTimes.measure(ingest); // warm-up
    for (let i = 0; i < ROUNDS; i++) alone.push(await hotTimes.measure(ingest));
    idle.push(
      ...(await openSockets(IDLE_SOCKETS, wsUrl, "graphql-transport-ws", async (socket, i) => {
        await handshake(socket);
        for (let k = 0; k < PER_IDLE_SOCKET; k++) {
          const serial = String(1_000_000 + i * PER_IDLE_SOCKET + k);
          socket.send(
            JSON.stringify({
              id: String(k),
              type: "subscribe",
              payload: { query: QUERY, variables: { a: `176-${serial}${Number(serial) % 7}` } },
            }),
          );
        }
      })),
    );
    while ((await gatewayMetric(gateway.url, "gateway_live_subscriptions")) < HOT + IDLE_SOCKETS * PER_IDLE_SOCKET)
      await sleep(200);
    await sleep(1_000);
    await hotTimes.measure(ingest);
    for (let i = 0; i < ROUNDS; i++) crowded.push(await hotTimes.measure(ingest));
  }
  for (const s of [...hot, ...idle]) s.terminate();
  gateway.child.kill("SIGTERM");
  await new Promise((r) => gateway.child.once("exit", r));

  // 2. The baseline: the same sockets, each having sent the same connection_init and subscribe; the
  //    very frame the gateway sent, broadcast.
  const baselineProbe = probed("baseline");
  const baseline = await startProcess(BASELINE, [], baselineProbe.env, "baseline listening");
  await sleep(2_000);
  const baselineIdle = { rssKb: rssKb(baseline.child.pid!), probe: await memoryOf(baseline.child, baselineProbe.file) };
  const bare = await openSockets(HOT, baseline.url.replace("http", "ws"), "graphql-transport-ws", async (socket) => {
    await handshake(socket);
    subscribe(socket);
  });
  await sleep(2_000);
  const baselineLoaded = {
    rssKb: rssKb(baseline.child.pid!),
    probe: await memoryOf(baseline.child, baselineProbe.file),
  };
  const bareTimes = receipts(bare);
  const broadcast = () => fetch(`${baseline.url}/broadcast`, { method: "POST", body: frame }).then((r) => r.text());
  const bareP99: number[] = [];
  if (!MEMORY_ONLY) {
    await bareTimes.measure(broadcast);
    for (let i = 0; i < ROUNDS; i++) bareP99.push(await bareTimes.measure(broadcast));
  }
  for (const s of bare) s.terminate();
  baseline.child.kill("SIGTERM");

  const gatewayPer = perSubscriber(gatewayIdle, gatewayLoaded);
  const barePer = perSubscriber(baselineIdle, baselineLoaded);
  const f = (ms: number) => `${ms.toFixed(1)} ms`;
  if (!MEMORY_ONLY) {
    console.log(`frame: ${frame.length} B ${frame}`);
    console.log(`gateway, ${HOT} hot sockets:          p99 ${f(median(alone))} (rounds: ${alone.map(f).join(", ")})`);
    console.log(
      `gateway, + ${IDLE_SOCKETS * PER_IDLE_SOCKET} idle subscriptions: p99 ${f(median(crowded))} (rounds: ${crowded.map(f).join(", ")})`,
    );
    console.log(
      `bare ws broadcast, ${HOT} sockets:    p99 ${f(median(bareP99))} (rounds: ${bareP99.map(f).join(", ")})`,
    );
    console.log(
      `fan-out p99 ratio ${(median(alone) / median(bareP99)).toFixed(2)}x (target <= 1.5); with idle subscribers ${(median(crowded) / median(alone)).toFixed(2)}x of without (target <= 1.2)`,
    );
  }
  const k = (kib: number) => `${kib.toFixed(1)} KiB`;
  const row = (name: keyof typeof gatewayPer, what: string) =>
    console.log(
      `memory per idle subscriber, ${what.padEnd(36)} gateway ${k(gatewayPer[name])}, bare ws ${k(barePer[name])} → ${(gatewayPer[name] / barePer[name]).toFixed(2)}x`,
    );
  row("rssRaw", "resident set (ps, no collection):");
  row("rss", "resident set after collection:");
  row("heap", "heap used after collection:");
  row("external", "external after collection:");
  const retained = (p: typeof gatewayPer) => p.heap + p.external;
  console.log(
    `memory per idle subscriber, retained (heap + external after collection): gateway ${k(retained(gatewayPer))}, bare ws ${k(retained(barePer))} → ${(retained(gatewayPer) / retained(barePer)).toFixed(2)}x (target <= 1.5)`,
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
