// npm run bench:live — 10,000 subscribed websockets (half on one hot AWB, half on cold AWBs, one
// each): publish-to-receipt latency of one milestone on the hot AWB, next to a bare `ws` server
// broadcasting the same frame to the same number of sockets; and resident memory per idle subscriber.
import { execFileSync } from "node:child_process";
import path from "node:path";
import WebSocket from "ws";
import { startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "bare-ws-server.js");
const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 10_000);
const KEY = "cgw_bench-admin-key-000000000003";
const HOT_AWB = "020-12345675";

const rssKb = (pid: number) => Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)]).toString().trim());
const percentile = (values: number[], q: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
const settle = () => new Promise((r) => setTimeout(r, 2_000));

/** Opens `count` sockets with at most 200 handshakes in flight; `onOpen` runs the per-socket protocol. */
async function openSockets(count: number, url: string, protocol: string | undefined, onOpen: (socket: WebSocket, i: number) => Promise<void>): Promise<WebSocket[]> {
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

async function main(): Promise<void> {
  // 1. The gateway with SOCKETS graphql-ws subscriptions.
  // One key stands for thousands of dashboards here, so the per-key websocket cap (50) is lifted.
  const gateway = await startGateway(GATEWAY, { DATA_DIR: "memory://", BOOTSTRAP_API_KEY: KEY, RATE_LIMIT_PER_SECOND: "0", LIVE_MAX_QUEUED_EVENTS: "100000", LIVE_MAX_CONNECTIONS_PER_KEY: "100000" });
  await settle();
  const gatewayIdle = rssKb(gateway.child.pid!);
  const hotReceipts: number[] = [];
  let t0 = 0;
  const wsUrl = `${gateway.url.replace("http", "ws")}/graphql`;
  const sockets = await openSockets(SOCKETS, wsUrl, "graphql-transport-ws", async (socket, i) => {
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${KEY}` } }));
    await new Promise((resolve) => socket.once("message", resolve));
    const serial = String(1_000_000 + i);
    const awb = i % 2 === 0 ? HOT_AWB : `176-${serial}${Number(serial) % 7}`;
    socket.send(JSON.stringify({ id: "1", type: "subscribe", payload: { query: `subscription($a: String!) { awbStatusChanged(awb: $a) { eventId awb state timestamp } }`, variables: { a: awb } } }));
    if (awb === HOT_AWB) socket.on("message", (data) => {
      if (String(data).includes('"next"')) hotReceipts.push(performance.now() - t0);
    });
  });
  await settle();
  const gatewayLoaded = rssKb(gateway.child.pid!);
  const hot = Math.ceil(SOCKETS / 2);
  t0 = performance.now();
  await fetch(`${gateway.url}/carrier/handling/shipment/events`, { method: "POST", headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" }, body: JSON.stringify({ awb: HOT_AWB, state: "DEP" }) });
  while (hotReceipts.length < hot) await new Promise((r) => setTimeout(r, 5));
  for (const s of sockets) s.terminate();
  gateway.child.kill("SIGTERM");

  // 2. The baseline: a bare ws server, the same number of sockets, the same frame to half of them… to all
  //    of them (a broadcast has no subscription filter), timed the same way over the hot half.
  const baseline = await startProcess(BASELINE, [], {}, "baseline listening");
  await settle();
  const baselineIdle = rssKb(baseline.child.pid!);
  const bareReceipts: number[] = [];
  const frame = JSON.stringify({ id: "1", type: "next", payload: { data: { awbStatusChanged: { eventId: "00000000-0000-4000-8000-000000000000", awb: HOT_AWB, state: "DEP", timestamp: new Date().toISOString() } } } });
  const bareSockets = await openSockets(SOCKETS, baseline.url.replace("http", "ws"), undefined, async (socket, i) => {
    if (i % 2 === 0) socket.on("message", () => bareReceipts.push(performance.now() - t0));
  });
  await settle();
  const baselineLoaded = rssKb(baseline.child.pid!);
  t0 = performance.now();
  await fetch(`${baseline.url}/broadcast`, { method: "POST", body: frame });
  while (bareReceipts.length < hot) await new Promise((r) => setTimeout(r, 5));
  for (const s of bareSockets) s.terminate();
  baseline.child.kill("SIGTERM");

  const perSocket = (loaded: number, idle: number) => ((loaded - idle) * 1024) / SOCKETS;
  const gatewayPer = perSocket(gatewayLoaded, gatewayIdle);
  const barePer = perSocket(baselineLoaded, baselineIdle);
  console.log(`bench:live — ${SOCKETS} sockets (${hot} on one hot AWB, the rest on cold AWBs)`);
  console.log(`gateway:   publish → receipt on ${hot} sockets: p50 ${percentile(hotReceipts, 0.5).toFixed(1)} ms, p99 ${percentile(hotReceipts, 0.99).toFixed(1)} ms, last ${Math.max(...hotReceipts).toFixed(1)} ms`);
  console.log(`bare ws:   publish → receipt on ${hot} sockets: p50 ${percentile(bareReceipts, 0.5).toFixed(1)} ms, p99 ${percentile(bareReceipts, 0.99).toFixed(1)} ms, last ${Math.max(...bareReceipts).toFixed(1)} ms`);
  console.log(`p99 ratio ${(percentile(hotReceipts, 0.99) / percentile(bareReceipts, 0.99)).toFixed(2)}x (target <= 2)`);
  console.log(`memory per idle subscriber: gateway ${(gatewayPer / 1024).toFixed(1)} KiB, bare ws ${(barePer / 1024).toFixed(1)} KiB → ${(gatewayPer / barePer).toFixed(2)}x (target <= 2)`);
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
