#!/usr/bin/env node
// Records how long each test file takes in the gate (`node scripts/test-durations.js`) or in the full
// suite (`--full`): builds and runs that suite as `npm test` does, each shard writing its files'
// wall-clock seconds (test/shards/shard.ts), and merges them into test/shards/durations.json under
// "gate" or "full" (files run outside the shards keep their recorded times).
// The shards are balanced by these times, and Jest starts the longest first (test/shards/plan.cjs,
// sequencer.cjs). Times are recorded only from a run that passed.
"use strict";
const { spawnSync } = require("node:child_process");
const { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { DURATIONS_ENV } = require("../test/shards/plan.cjs");

const root = path.join(__dirname, "..");
const full = process.argv.includes("--full");
const folder = mkdtempSync(path.join(os.tmpdir(), "cgw-durations-"));
try {
  const build = spawnSync(process.execPath, [path.join(__dirname, "build.js")], { cwd: root, stdio: "inherit" });
  if (build.status !== 0) process.exit(build.status ?? 1);
  const run = spawnSync(process.execPath, [path.join(__dirname, "test.js"), ...(full ? ["--full"] : [])], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, [DURATIONS_ENV]: folder },
  });
  if (run.status !== 0) {
    console.error("test-durations: the run failed; durations.json is unchanged");
    process.exit(run.status ?? 1);
  }
  const seconds = {};
  for (const name of readdirSync(folder))
    for (const line of readFileSync(path.join(folder, name), "utf8").split("\n").filter(Boolean)) {
      const { file, seconds: taken } = JSON.parse(line);
      seconds[file] = Math.round(taken * 10) / 10;
    }
  const target = path.join(root, "test", "shards", "durations.json");
  const durations = JSON.parse(readFileSync(target, "utf8"));
  const suite = full ? "full" : "gate";
  const merged = { ...durations[suite], ...seconds };
  durations[suite] = Object.fromEntries(Object.entries(merged).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(target, `${JSON.stringify(durations, null, 2)}\n`);
  console.log(
    `test/shards/durations.json: ${Object.keys(seconds).length} files of the ${suite === "gate" ? "gate" : "full suite"}`,
  );
} finally {
  rmSync(folder, { recursive: true, force: true });
}
