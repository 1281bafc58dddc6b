// Jest's order of test files (jest.config.js testSequencer): in a run of the shards (scripts/test.js
// hands down the plan), the longest first, by the recorded durations (plan.cjs). Jest's own order
// needs a cache of earlier runs, which a fresh clone lacks, and its fallback (file size) sees every
// shard as the same: the longest shard could start last and run on alone at the end. Other runs
// (`npm test -- <file>`, the full suite's phase 2) keep Jest's order: last run's failures first.
"use strict";
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;
const { root, PLAN_ENV, SUITE_ENV, shards, weights } = require("./plan.cjs");

const SHARD_FILE = /^test\/shards\/(\d+)\.shard\.ts$/;

class LongestFirst extends Sequencer {
  sort(tests) {
    if (!process.env[PLAN_ENV]) return super.sort(tests);
    const weight = weights({ gate: process.env[SUITE_ENV] === "gate" });
    const plan = shards();
    const seconds = (test) => {
      const file = path.relative(root, test.path).split(path.sep).join("/");
      const shard = SHARD_FILE.exec(file);
      if (shard === null) return weight(file);
      return (plan[Number(shard[1]) - 1] ?? []).reduce((sum, member) => sum + weight(member), 0);
    };
    return tests
      .map((test) => ({ test, seconds: seconds(test) }))
      .sort((a, b) => b.seconds - a.seconds || a.test.path.localeCompare(b.test.path))
      .map(({ test }) => test);
  }
}

module.exports = LongestFirst;
