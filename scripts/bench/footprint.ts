// npm run bench:footprint — how much memory an idle gateway holds on the embedded default.
// Starts the built gateway (`node dist/src/main.js`, default settings: embedded database in a data
// folder, info logging to /dev/null) on a fresh folder, waits until it is ready and then idle for
// BENCH_IDLE_S seconds, and reads its resident set from /proc; then stops it and restarts it on the
// same (now migrated) folder, which is what every later start of a deployment looks like. The
// baseline is the bare baseline server (scripts/bench/baseline-server.ts) idle for as long: what any
// Node HTTP process holds before it does anything.
import { readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import type { ChildProcess } from "node:child_process";
import { startGateway, startProcess } from "./harness";

// BENCH_MAIN=<path to a built main.js> measures another build (say, an earlier commit's) the same way.
const MAIN = process.env.BENCH_MAIN ?? path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "baseline-server.js");
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 15);

function residentMiB(child: ChildProcess): number {
  const status = readFileSync(`/proc/${child.pid}/status`, "utf8");
  const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]);
  return kib / 1024;
}

async function idleThenMeasure(child: ChildProcess): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, IDLE_S * 1_000));
  return residentMiB(child);
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "gw-footprint-"));
  const routesFile = path.join(dataDir, "..", `${path.basename(dataDir)}-routes.json`);
  try {
    const env = { DATA_DIR: dataDir, LOG_LEVEL: "info" };
    const first = await startGateway(MAIN, env);
    const firstMiB = await idleThenMeasure(first.child);
    await stop(first.child);
    const again = await startGateway(MAIN, env);
    const againMiB = await idleThenMeasure(again.child);
    await stop(again.child);

    await writeFile(routesFile, JSON.stringify({ "/healthz": '{"status":"ok"}' }));
    const bare = await startProcess(BASELINE, [routesFile], {}, "baseline listening");
    const bareMiB = await idleThenMeasure(bare.child);
    await stop(bare.child);

    const row = (what: string, mib: number) => `| ${what} | ${mib.toFixed(0)} MiB | ${(mib / bareMiB).toFixed(1)}× |`;
    console.log(`idle ${IDLE_S} s after ready, resident set (VmRSS)\n`);
    console.log("| process | resident | × bare |\n|---|---:|---:|");
    console.log(row("gateway, first start (migrations applied)", firstMiB));
    console.log(row("gateway, restart on the migrated folder", againMiB));
    console.log(row("bare node:http server (baseline)", bareMiB));
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await rm(routesFile, { force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
