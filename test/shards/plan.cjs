// The full run's shards (scripts/test.js): test files that run one after another in one Jest module
// registry, so the gateway's modules load, and V8 compiles them, once per shard instead of once per
// file. Each file keeps its own top-level describe, hooks and resources (shard.ts).
"use strict";
const { readdirSync } = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..");
/**
 * Phase 2 of the full run, one file at a time with no other test beside it: never in a shard. Only tests
 * that compare rates measured in the run (`*.rates.test.ts`) or hold a time budget with a browser
 * (`*.browser.test.ts`); the fault tests (`*.faults.test.ts`) mostly wait on processes and services, and
 * run in the shards.
 */
const SERIAL = /\.(rates|browser)\.test\.ts$/;
/**
 * Files that change the module registry for everything loaded after them (`jest.mock` and its kin):
 * they run as files of their own. test/shards.test.ts fails on a test file that does and is not here.
 */
const ISOLATED = ["test/migrations.fast-path.test.ts"];
/** How many shards: a few per Jest worker, so a worker that finishes early takes the next one. */
const SHARDS = 9;
/** Where scripts/test.js hands the plan it made to the shards (made once: every worker sees the same). */
const PLAN_ENV = "TEST_SHARD_PLAN";

/** Every test file, relative to the repository, in a stable order. */
function testFiles() {
  return readdirSync(path.join(root, "test"), { recursive: true })
    .map((file) => path.posix.join("test", file.split(path.sep).join("/")))
    .filter((file) => file.endsWith(".test.ts"))
    .sort();
}

/**
 * The files of each shard: the ones neither serial nor isolated, spread by their recorded wall-clock
 * seconds (durations.json, scripts/test-durations.js; a file not recorded counts as the median) — the
 * heaviest first, each into the lightest shard so far.
 */
function makeShards() {
  const durations = require("./durations.json");
  const recorded = Object.values(durations).sort((a, b) => a - b);
  const median = recorded.length > 0 ? recorded[Math.floor(recorded.length / 2)] : 1;
  const files = testFiles()
    .filter((file) => !SERIAL.test(file) && !ISOLATED.includes(file))
    .map((file) => ({ file, weight: durations[file] ?? median }))
    .sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file));
  const plan = Array.from({ length: SHARDS }, () => ({ weight: 0, files: [] }));
  for (const { file, weight } of files) {
    const lightest = plan.reduce((best, shard) => (shard.weight < best.weight ? shard : best));
    lightest.weight += weight;
    lightest.files.push(file);
  }
  return plan.map((shard) => shard.files);
}

/** The plan scripts/test.js handed down (made once for every worker), or a new one. */
function shards() {
  return process.env[PLAN_ENV] ? JSON.parse(process.env[PLAN_ENV]) : makeShards();
}

/** Jest's arguments that select phase 1: the shards' entry files and the isolated files. */
const PHASE_ONE = ["--testMatch", "**/test/shards/*.shard.ts", ...ISOLATED.map((file) => `**/${file}`)];

module.exports = { root, SERIAL, ISOLATED, SHARDS, PLAN_ENV, PHASE_ONE, testFiles, makeShards, shards };
