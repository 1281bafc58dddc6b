#!/usr/bin/env node
// npm test (the gate, what CI runs) and npm run test:full (everything): Jest in one phase (the full
// suite: two), with the static checks beside them. CONTRIBUTING.md, "The gate and the full suite".
// - Phase 1: every test file but the rate tests, three Jest workers, in shards (test/shards/plan.cjs):
//   files that run one after another in one Jest module registry, so the gateway's modules load once
//   per shard, not once per file. Three workers, not two: the tests wait on sockets, processes,
//   Chromium and timers for about a quarter of their time, and a third worker fills it.
// - Phase 2 (the full suite's only): the tests that compare rates measured in the run
//   (test/*.rates.test.ts), after the rest, one file at a time, with no other test beside them.
// - The gate leaves out the full suite's own files (plan.cjs FULL_ONLY, the rate tests among them)
//   and tells the tests it is the gate (TEST_SUITE=gate: behaviour tests on one database, an eighth
//   of each fuzz run; test/support/suite.ts).
// - The static checks run from the start to the end, side by side: the import directions (`npm run
//   lint:deps`, .dependency-cruiser.cjs: an import that points up a layer, docs/ARCHITECTURE.md
//   "Layers"), the type-checks of src/ and scripts/, test/ and web/ with ESLint in one process
//   (scripts/static-checks.js; the build that `pretest` ran only strips types; the gate lints src/ and
//   scripts/ only), and in the full suite Prettier — together the same as `npm run check` — at a low
//   priority (nice 10): the tests have the cores first, and the checks still take about a tenth of
//   one, enough to end with the tests instead of after them on one core.
// With arguments (`npm test -- test/live.test.ts`), Jest runs once with them, after the import check,
// as the full suite runs them.
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const path = require("node:path");

const root = path.join(__dirname, "..");
const { PLAN_ENV, SUITE_ENV, fullOnly, makeShards, phaseOne, phaseTwo, testFiles } = require("../test/shards/plan.cjs");
const bin = (pkg, file) => path.join(root, "node_modules", pkg, file);
const jest = [
  "--experimental-vm-modules",
  "--no-warnings=ExperimentalWarning",
  // Leak tests compare heap sizes after forced collections.
  "--expose-gc",
  // Test processes are short-lived: PostgreSQL's WebAssembly left on V8's baseline code costs less CPU
  // than optimising it (BENCHMARKS.md, "V8's WebAssembly tier-up"), as for the gateways tests spawn.
  "--wasm-tiering-budget=2000000000",
  bin("jest", "bin/jest.js"),
];
const depcruise = [
  bin("dependency-cruiser", "bin/dependency-cruise.mjs"),
  "src",
  "--config",
  ".dependency-cruiser.cjs",
];
const importCheck = ['import directions (npm run lint:deps; docs/ARCHITECTURE.md, "Layers")', depcruise];
// The full suite's: one process, each TypeScript program built once for the type-check and ESLint's
// type-aware rules (scripts/static-checks.js).
const typeCheckAndLint = [
  "type-check of src/, scripts/, test/ and web/ and lint (npm run typecheck, npm run lint)",
  [path.join(root, "scripts", "static-checks.js")],
];
/**
 * The gate's: the type-check, and the lint of the product's own code (src/ and scripts/: a floating
 * promise there can end the process). The tests' lint (about 20 s of CPU) is the full suite's and
 * `npm run check`'s.
 */
const typeCheckAndSrcLint = [
  "type-check of src/, scripts/, test/ and web/ and lint of src/ and scripts/ (npm run typecheck, npm run lint)",
  [path.join(root, "scripts", "static-checks.js"), "--types", "--lint-src"],
];
/** Formatting: the full suite's and `npm run check`'s; the gate leaves it out (about 15 s of CPU, no behaviour). */
const formatCheck = [
  "formatting (npm run format:check; npm run format fixes it)",
  [bin("prettier", "bin/prettier.cjs"), "--check", "."],
];

/**
 * Runs node with `args`; resolves its exit status. `quiet` (the static checks): at a low priority
 * (nice 10, a tenth of a core's share against the tests: see the top of this file), and the output kept
 * in `kept.output` for the caller to print.
 */
function node(args, { quiet = false, env = process.env, kept = {} } = {}) {
  return new Promise((resolve) => {
    const [command, commandArgs] = quiet ? ["nice", ["-n", "10", process.execPath, ...args]] : [process.execPath, args];
    const child = spawn(command, commandArgs, {
      cwd: root,
      env,
      stdio: quiet ? ["ignore", "pipe", "pipe"] : "inherit",
    });
    let output = "";
    if (quiet) {
      child.stdout.on("data", (chunk) => (output += chunk));
      child.stderr.on("data", (chunk) => (output += chunk));
    }
    child.on("error", (error) => {
      output += `${error.message}\n`;
    });
    child.on("close", (status) => {
      if (quiet) kept.output = output;
      else if (output !== "") process.stderr.write(output); // the spawn itself failed
      resolve(status ?? 1);
    });
  });
}

const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(0)} s`;

/**
 * The static checks side by side: each is one thread, and once the tests are done, the last of them
 * would otherwise leave a core idle. Resolves with the ones that failed and what they printed.
 */
async function runChecks({ gate }) {
  const outcomes = await Promise.all(
    (gate ? [importCheck, typeCheckAndSrcLint] : [importCheck, typeCheckAndLint, formatCheck]).map(
      async ([what, command]) => {
        const started = Date.now();
        const kept = { output: "" };
        const status = await node(command, { quiet: true, kept });
        console.log(`npm test: ${what}: ${status === 0 ? "passed" : "FAILED"} in ${seconds(started)}`);
        return { what, status, output: kept.output };
      },
    ),
  );
  return outcomes.filter((outcome) => outcome.status !== 0);
}

async function main() {
  // Every process below runs on this Node (process.execPath): CI's log says which.
  console.log(`npm test: Node ${process.version}`);
  const full = process.argv[2] === "--full";
  const args = process.argv.slice(full ? 3 : 2);
  if (args.length > 0) {
    const lintDeps = spawnSync(process.execPath, depcruise, { stdio: "inherit", cwd: root }).status ?? 1;
    if (lintDeps !== 0) {
      console.error('npm run lint:deps failed: an import points up a layer (docs/ARCHITECTURE.md, "Layers").');
      return lintDeps;
    }
    return node([...jest, ...args]);
  }
  const gate = !full;
  const suite = gate ? "the gate" : "the full suite";
  // Unset, a test runs as in the full suite (as a direct Jest run does).
  const env = { ...process.env, [SUITE_ENV]: gate ? "gate" : "" };

  const checks = runChecks({ gate });
  let started = Date.now();
  // The plan is made once, here (never one left in the environment): every worker's shards hold the same files.
  const first = await node([...jest, "--maxWorkers=3", ...phaseOne({ gate })], {
    env: { ...env, [PLAN_ENV]: JSON.stringify(makeShards({ gate })) },
  });
  console.log(`npm test: ${suite}, phase 1 (all but the rate tests) took ${seconds(started)}`);
  let second = 0;
  const serial = phaseTwo({ gate });
  if (serial !== "") {
    started = Date.now();
    // In band, one file at a time. Not --forceExit, which warns on every run: a handle left open after
    // the last file fails the run, naming it (test/support/global-teardown.ts), instead of holding it.
    second = await node([...jest, "--runInBand", "--testPathPatterns", serial], { env });
    console.log(`npm test: ${suite}, phase 2 (rate tests, one at a time) took ${seconds(started)}`);
  }
  started = Date.now();
  const failedChecks = await checks;
  if (Date.now() - started >= 1_000)
    console.log(`npm test: the static checks went on for ${seconds(started)} after the tests`);
  for (const { what, output } of failedChecks) {
    process.stderr.write(output);
    console.error(`npm test: ${what} failed (its output is above).`);
  }
  if (gate)
    console.log(
      `npm test: the gate left out ${testFiles().filter(fullOnly).length} files, the tests it reported as skipped ` +
        "for the full suite, the behaviour tests' PostgreSQL half, seven eighths of each fuzz run, smaller floods against the same bounds, the tests' lint, the formatting check and " +
        '18 of the live churn test\'s 30 rounds: npm run test:full runs them (CONTRIBUTING.md, "The gate and the full suite").',
    );
  return first || second || (failedChecks.length > 0 ? 1 : 0);
}

main().then((status) => process.exit(status));
