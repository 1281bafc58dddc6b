// npm run bench:live — live fan-out of milestones over graphql-ws.
//   1. 10,000 websockets subscribed (awbStatusChanged) to one hot AWB: publish-to-receipt p99 of a
//      milestone ingested over HTTP, next to a bare `ws` server (its own process) broadcasting the
//      very same frame to the same number of sockets; resident memory per idle subscriber on both.
//   2. The same hot measurement with 50,000 idle subscriptions on other AWBs (500 sockets × 100).
// Each p99 is the median over ROUNDS events. The gateway runs with default settings except the
// per-key socket cap and rate limit, lifted because one bench key stands for thousands of dashboards.
import { execFileSync } from "node:child_process";
import path from "node:path";
import WebSocket from "ws";
import { metricsOf, startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "bare-ws-server.js");
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
  // 1. The gateway.
  const gateway = await startGateway(GATEWAY, {
    DATA_DIR: "memory://",
    BOOTSTRAP_API_KEY: KEY,
    RATE_LIMIT_PER_SECOND: "0",
    LIVE_MAX_CONNECTIONS_PER_KEY: "1000000",
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
  });
  const wsUrl = `${gateway.url.replace("http", "ws")}/graphql`;
  const handshake = async (socket: WebSocket) => {
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${KEY}` } }));
    await new Promise((resolve) => socket.once("message", resolve));
  };
  await sleep(2_000);
  const gatewayIdle = rssKb(gateway.child.pid!);
  let frame = "";
  const hot = await openSockets(HOT, wsUrl, "graphql-transport-ws", async (socket) => {
    await handshake(socket);
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: QUERY, variables: { a: HOT_AWB } } }));
  });
  hot[0]!.on("message", (data: Buffer) => (frame = data.toString()));
  while ((await gatewayMetric(gateway.url, "gateway_live_subscriptions")) < HOT) await sleep(100);
  await sleep(2_000);
  const gatewayLoaded = rssKb(gateway.child.pid!);
  const hotTimes = receipts(hot);
  let n = 0;
  const ingest = () =>
    fetch(`${gateway.url}/carrier/handling/shipment/events`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ awb: HOT_AWB, state: "DEP", station: "FRA", eventId: `live-${++n}` }),
    }).then((r) => r.text());
  await hotTimes.measure(ingest); // warm-up
  const alone: number[] = [];
  for (let i = 0; i < ROUNDS; i++) alone.push(await hotTimes.measure(ingest));

  const idle = await openSockets(IDLE_SOCKETS, wsUrl, "graphql-transport-ws", async (socket, i) => {
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
  });
  while ((await gatewayMetric(gateway.url, "gateway_live_subscriptions")) < HOT + IDLE_SOCKETS * PER_IDLE_SOCKET)
    await sleep(200);
  await sleep(1_000);
  await hotTimes.measure(ingest);
  const crowded: number[] = [];
  for (let i = 0; i < ROUNDS; i++) crowded.push(await hotTimes.measure(ingest));
  for (const s of [...hot, ...idle]) s.terminate();
  gateway.child.kill("SIGTERM");
  await new Promise((r) => gateway.child.once("exit", r));

  // 2. The baseline: the same number of sockets, the very frame the gateway sent, broadcast.
  const baseline = await startProcess(BASELINE, [], {}, "baseline listening");
  await sleep(2_000);
  const baselineIdle = rssKb(baseline.child.pid!);
  const bare = await openSockets(HOT, baseline.url.replace("http", "ws"), undefined, async () => {});
  await sleep(2_000);
  const baselineLoaded = rssKb(baseline.child.pid!);
  const bareTimes = receipts(bare);
  const broadcast = () => fetch(`${baseline.url}/broadcast`, { method: "POST", body: frame }).then((r) => r.text());
  await bareTimes.measure(broadcast);
  const bareP99: number[] = [];
  for (let i = 0; i < ROUNDS; i++) bareP99.push(await bareTimes.measure(broadcast));
  for (const s of bare) s.terminate();
  baseline.child.kill("SIGTERM");

  const perSocket = (loaded: number, before: number) => ((loaded - before) * 1024) / HOT;
  const gatewayPer = perSocket(gatewayLoaded, gatewayIdle);
  const barePer = perSocket(baselineLoaded, baselineIdle);
  const f = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(`frame: ${frame.length} B ${frame}`);
  console.log(`gateway, ${HOT} hot sockets:          p99 ${f(median(alone))} (rounds: ${alone.map(f).join(", ")})`);
  console.log(
    `gateway, + ${IDLE_SOCKETS * PER_IDLE_SOCKET} idle subscriptions: p99 ${f(median(crowded))} (rounds: ${crowded.map(f).join(", ")})`,
  );
  console.log(`bare ws broadcast, ${HOT} sockets:    p99 ${f(median(bareP99))} (rounds: ${bareP99.map(f).join(", ")})`);
  console.log(
    `fan-out p99 ratio ${(median(alone) / median(bareP99)).toFixed(2)}x (target <= 1.5); with idle subscribers ${(median(crowded) / median(alone)).toFixed(2)}x of without (target <= 1.2)`,
  );
  console.log(
    `memory per idle subscriber: gateway ${(gatewayPer / 1024).toFixed(1)} KiB, bare ws ${(barePer / 1024).toFixed(1)} KiB → ${(gatewayPer / barePer).toFixed(2)}x (target <= 2)`,
  );
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
