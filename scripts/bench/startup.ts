// npm run bench:startup — how long `npm start` of a built checkout takes until it serves.
// Spawns `npm start` (its pre-script's build check included) with default settings — embedded database
// in a data folder, info logging read through a pipe — and asks GET /healthz every 10 ms until the first
// 200: that is the row's number. Each run starts once on a fresh data folder (a first start) and then
// again on the same folder (a restart: every later start of a deployment), and once more as
// `node dist/src/main.js` on it, which shows npm's and the build check's share. The log's timestamps
// give the phases ("database ready", "gateway listening"), counted from the spawn. The baseline is the
// bare `node:http` server of the station benchmark, from spawn to its first answer.
// BENCH_RUNS (default 3) runs; BENCH_ROOT=<checkout> measures another built checkout.
import { type ChildProcess, spawn } from "node:child_process";
import { statSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { freePort } from "./harness";

const ROOT = process.env.BENCH_ROOT ?? path.resolve(__dirname, "../../..");
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BASELINE = path.resolve(__dirname, "baseline-server.js");
const BUILD_FINGERPRINT = path.join(ROOT, "dist", ".build-inputs");
const POLL_MS = 10;
const GIVE_UP_MS = 120_000;

interface Start {
  /** Spawn → first 200 of GET /healthz. */
  servesMs: number;
  /** Spawn → the log's "database ready" and "gateway listening" lines. */
  phases: Record<string, number>;
  /** True when the build's inputs changed meanwhile (someone edited a source): the build check compiled. */
  rebuilt: boolean;
}

const PHASES = ["database ready", "gateway listening"];

function answers200(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const request = http.get(url, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on("error", () => resolve(false));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  await exited;
}

function buildStamp(): number {
  try {
    return statSync(BUILD_FINGERPRINT).mtimeMs;
  } catch {
    return 0;
  }
}

/** Starts `command` in the checkout and times it until GET /healthz answers 200; then stops it. */
async function timeStart(command: string, args: string[], dataDir: string): Promise<Start> {
  const port = await freePort();
  const stampBefore = buildStamp();
  const spawnedAt = Date.now();
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? tmpdir(), PORT: String(port), DATA_DIR: dataDir },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const phases: Record<string, number> = {};
  readline.createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      const entry = JSON.parse(line) as { msg?: string; time?: number | string };
      if (entry.msg && PHASES.includes(entry.msg) && phases[entry.msg] === undefined)
        phases[entry.msg] = new Date(entry.time ?? Date.now()).getTime() - spawnedAt;
    } catch {
      // npm's own lines
    }
  });
  try {
    while (!(await answers200(`http://127.0.0.1:${port}/healthz`))) {
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(" ")} exited with ${child.exitCode}`);
      if (Date.now() - spawnedAt > GIVE_UP_MS) throw new Error(`${command} did not serve in ${GIVE_UP_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
    return { servesMs: Date.now() - spawnedAt, phases, rebuilt: buildStamp() !== stampBefore };
  } finally {
    await stop(child);
  }
}

async function timeBaseline(routesFile: string): Promise<number> {
  const spawnedAt = Date.now();
  const child = spawn(process.execPath, [BASELINE, routesFile], { stdio: ["ignore", "pipe", "inherit"] });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).on("line", (line) => {
        const entry = JSON.parse(line) as { url?: string };
        if (entry.url) resolve(entry.url);
      });
      child.once("exit", (code) => reject(new Error(`the baseline exited with ${code}`)));
    });
    if (!(await answers200(`${url}/healthz`))) throw new Error("the baseline did not answer 200");
    return Date.now() - spawnedAt;
  } finally {
    await stop(child);
  }
}

function cell(start: Start): string {
  const phases = PHASES.map((phase) => `${phase} ${start.phases[phase] ?? "?"}`).join(", ");
  return `${(start.servesMs / 1000).toFixed(2)} s (${phases} ms)${start.rebuilt ? " REBUILT: void" : ""}`;
}

async function main(): Promise<void> {
  const scratch = await mkdtemp(path.join(tmpdir(), "gw-startup-"));
  const routesFile = path.join(scratch, "routes.json");
  await writeFile(routesFile, JSON.stringify({ "/healthz": '{"status":"ok"}' }));
  const rows: string[] = [];
  try {
    for (let run = 1; run <= RUNS; run++) {
      const dataDir = path.join(scratch, `data-${run}`);
      const first = await timeStart("npm", ["start"], dataDir);
      const restart = await timeStart("npm", ["start"], dataDir);
      const direct = await timeStart(process.execPath, ["dist/src/main.js"], dataDir);
      const bareMs = await timeBaseline(routesFile);
      rows.push(`| ${run} | ${cell(first)} | ${cell(restart)} | ${cell(direct)} | ${(bareMs / 1000).toFixed(2)} s |`);
      console.error(`run ${run} done`);
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  console.log("spawn → first 200 of GET /healthz (phases: the log's lines, ms after the spawn)\n");
  console.log(
    "| run | `npm start`, first start | `npm start`, restart | `node dist/src/main.js`, restart | bare node:http |",
  );
  console.log("|---|---|---|---|---:|");
  for (const row of rows) console.log(row);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
