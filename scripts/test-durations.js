#!/usr/bin/env node
// Records how long each test file took (test/shards/durations.json), from a Jest report of a run file by
// file: `npm test -- --json --outputFile=/tmp/jest.json`, then `node scripts/test-durations.js /tmp/jest.json`.
// The full run's shards are balanced by these times (test/shards/plan.cjs).
"use strict";
const { readFileSync, writeFileSync } = require("node:fs");
const path = require("node:path");

const root = path.join(__dirname, "..");
const report = process.argv[2];
if (!report) {
  console.error("usage: node scripts/test-durations.js <jest --json report of a run file by file>");
  process.exit(2);
}
const durations = {};
for (const { name, startTime, endTime } of JSON.parse(readFileSync(report, "utf8")).testResults) {
  const file = path.relative(root, name).split(path.sep).join("/");
  if (file.startsWith("test/shards/")) {
    console.error(`${report} is a sharded run's report: run the files one by one (npm test -- --json …)`);
    process.exit(1);
  }
  durations[file] = Math.round((endTime - startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(durations).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(path.join(root, "test", "shards", "durations.json"), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/shards/durations.json: ${Object.keys(sorted).length} files`);
