// The full run's shards (scripts/test.js): test files that run one after another in one Jest module
// registry, so the gateway's modules load, and V8 compiles them, once per shard instead of once per
// file. Each file keeps its own top-level describe, hooks and resources (shard.ts).
"use strict";
const { readdirSync } = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..", "..");
/**
 * Phase 2 of the full run, one file at a time with no other test beside it: never in a shard. Only tests
 * that compare rates measured in the run (`*.rates.test.ts`), all of them the full suite's; the browser
 * tests (`*.browser.test.ts`) wait mostly on Chromium, with liveness bounds only, and the fault tests
 * (`*.faults.test.ts`) on processes and services: both run in the shards.
 */
const SERIAL = /\.rates\.test\.ts$/;
/**
 * Files that change the module registry for everything loaded after them (`jest.mock` and its kin):
 * they run as files of their own. test/shards.test.ts fails on a test file that does and is not here.
 */
const ISOLATED = ["test/migrations.fast-path.test.ts"];
/**
 * What the gate (`npm test`, which CI runs) leaves to the full suite (`npm run test:full`): tests of
 * whole processes and of the start (started, signalled, killed, failed at each step, their exit codes
 * and stop deadlines), of the admin commands run as processes, of services and receivers failing under
 * gateway processes (`*.faults`, `*.rates`), and of the schema's history (migrations replayed and
 * diffed, the embedded template made), and of the tests' own embedded-database pool. Most start
 * processes of their own, each costing about a second
 * or more of CPU. CONTRIBUTING.md, "The gate and the full suite", lists the same files (test/shards.test.ts
 * holds the two equal); single tests and describes elsewhere are marked with test/support/suite.ts.
 */
const FULL_ONLY = [
  "test/admin-cli.test.ts",
  "test/deployment.test.ts",
  "test/embedded-pool.test.ts",
  "test/embedded-template.test.ts",
  "test/ingestion.broker-restart.test.ts",
  "test/live.pruned-history.test.ts",
  "test/migrations.fast-path.test.ts",
  "test/migrations.test.ts",
  "test/onerecord/start-warning.test.ts",
  "test/onerecord/wishes.admin.test.ts",
  "test/process-watchdog.test.ts",
  "test/process.test.ts",
  "test/request-log.process.test.ts",
  "test/start-logs.process.test.ts",
  "test/start-steps.test.ts",
];
/** The fault tests and the rate comparisons over gateway processes, also the full suite's alone. */
const FULL_ONLY_PATTERN = /\.(faults|rates)\.test\.ts$/;
const fullOnly = (file) => FULL_ONLY.includes(file) || FULL_ONLY_PATTERN.test(file);
/** Where scripts/test.js says which suite runs: `gate`, or unset for everything. */
const SUITE_ENV = "TEST_SUITE";
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

/** Where scripts/test-durations.js asks the shards to record each file's duration (shard.ts). */
const DURATIONS_ENV = "TEST_DURATIONS_DIR";

/**
 * Each file's recorded wall-clock seconds in the gate or in the full suite (durations.json, written by
 * scripts/test-durations.js from a sharded run of that suite); a file not recorded counts as the median.
 */
function weights({ gate = false } = {}) {
  const recorded = require("./durations.json")[gate ? "gate" : "full"] ?? {};
  const sorted = Object.values(recorded).sort((a, b) => a - b);
  const median = sorted.length > 0 ? sorted[Math.floor(sorted.length / 2)] : 1;
  return (file) => recorded[file] ?? median;
}

/**
 * The files of each shard: the ones neither serial nor isolated, spread by their recorded durations —
 * the heaviest first, each into the lightest shard so far — and the heaviest shard first: Jest starts
 * them in this order (sequencer.cjs), so the last to start are the lightest.
 */
function makeShards({ gate = false } = {}) {
  const weight = weights({ gate });
  const files = testFiles()
    .filter((file) => !SERIAL.test(file) && !ISOLATED.includes(file) && !(gate && fullOnly(file)))
    .map((file) => ({ file, weight: weight(file) }))
    .sort((a, b) => b.weight - a.weight || a.file.localeCompare(b.file));
  const plan = Array.from({ length: SHARDS }, () => ({ weight: 0, files: [] }));
  for (const { file, weight } of files) {
    const lightest = plan.reduce((best, shard) => (shard.weight < best.weight ? shard : best));
    lightest.weight += weight;
    lightest.files.push(file);
  }
  return plan.sort((a, b) => b.weight - a.weight).map((shard) => shard.files);
}

/** The plan scripts/test.js handed down (made once for every worker), or a new one. */
function shards() {
  return process.env[PLAN_ENV] ? JSON.parse(process.env[PLAN_ENV]) : makeShards();
}

/** Jest's arguments that select phase 1: the shards' entry files and the isolated files (the gate's only). */
const phaseOne = ({ gate = false } = {}) => [
  "--testMatch",
  "**/test/shards/*.shard.ts",
  ...ISOLATED.filter((file) => !(gate && fullOnly(file))).map((file) => `**/${file}`),
];
/** The serial files of phase 2 (the full suite's only: "" in the gate), as a Jest path pattern. */
const phaseTwo = ({ gate = false } = {}) =>
  testFiles()
    .filter((file) => SERIAL.test(file) && !(gate && fullOnly(file)))
    .map((file) => file.replace(/[.]/g, "\\."))
    .join("|");

module.exports = {
  root,
  SERIAL,
  ISOLATED,
  FULL_ONLY,
  FULL_ONLY_PATTERN,
  SHARDS,
  PLAN_ENV,
  SUITE_ENV,
  DURATIONS_ENV,
  fullOnly,
  weights,
  phaseOne,
  phaseTwo,
  testFiles,
  makeShards,
  shards,
};
