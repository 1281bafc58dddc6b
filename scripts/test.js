#!/usr/bin/env node
// npm test: Jest, in two phases. The fault tests (test/*.faults.test.ts) compare delivery rates over
// real processes, and the browser tests (test/*.browser.test.ts) hold a 2-second budget with Chromium
// using a core of its own; both run after the rest, one file at a time, instead of sharing the two
// cores with other test files. With arguments (`npm test -- test/live.test.ts`), Jest runs once with them.
// Before any of it, the dependency check (`npm run lint:deps`, .dependency-cruiser.cjs): an import that
// points up a layer (docs/ARCHITECTURE.md, "Layers") fails the run. A whole run (no arguments) also
// type-checks src/, scripts/, test/ and web/, lints (ESLint) and checks formatting (Prettier) first:
// the same as `npm run check`.
"use strict";
const { spawnSync } = require("node:child_process");
const path = require("node:path");

const jest = [
  "--experimental-vm-modules",
  "--no-warnings=ExperimentalWarning",
  // Leak tests compare heap sizes after forced collections.
  "--expose-gc",
  path.join(__dirname, "..", "node_modules", "jest", "bin", "jest.js"),
];
const root = path.join(__dirname, "..");
// The same command as `npm run lint:deps`.
const depcruise = [
  path.join(root, "node_modules", "dependency-cruiser", "bin", "dependency-cruise.mjs"),
  "src",
  "--config",
  ".dependency-cruiser.cjs",
];
const lintDeps = spawnSync(process.execPath, depcruise, { stdio: "inherit", cwd: root }).status ?? 1;
if (lintDeps !== 0) {
  console.error('npm run lint:deps failed: an import points up a layer (docs/ARCHITECTURE.md, "Layers").');
  process.exit(lintDeps);
}

const bin = (pkg, file) => path.join(root, "node_modules", pkg, file);
const staticChecks = [
  ["type-check src/ and scripts/ (npm run typecheck)", [bin("typescript", "bin/tsc"), "-p", ".", "--noEmit"]],
  ["type-check test/ (npm run typecheck)", [bin("typescript", "bin/tsc"), "-p", "test"]],
  ["type-check web/ (npm run typecheck)", [bin("typescript", "bin/tsc"), "-p", "web"]],
  ["lint (npm run lint)", [bin("eslint", "bin/eslint.js"), "."]],
  ["formatting (npm run format:check; npm run format fixes it)", [bin("prettier", "bin/prettier.cjs"), "--check", "."]],
];

const run = (args) => spawnSync(process.execPath, [...jest, ...args], { stdio: "inherit" }).status ?? 1;

const args = process.argv.slice(2);
if (args.length > 0) process.exit(run(args));
for (const [what, command] of staticChecks) {
  const status = spawnSync(process.execPath, command, { stdio: "inherit", cwd: root }).status ?? 1;
  if (status !== 0) {
    console.error(`npm test: ${what} failed.`);
    process.exit(status);
  }
}
const serial = "\\.(faults|browser)\\.test\\.ts$";
const first = run(["--testPathIgnorePatterns", serial]);
// In band, one file at a time. --forceExit: these files start real processes, servers and browsers;
// if one ever leaked a handle, an in-band run would wait for it forever instead of reporting.
const second = run(["--runInBand", "--forceExit", "--testPathPatterns", serial]);
process.exit(first || second);
