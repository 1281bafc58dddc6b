import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plan is CommonJS, shared with scripts/test.js
const plan = require("./shards/plan.cjs") as {
  root: string;
  SERIAL: RegExp;
  ISOLATED: string[];
  FULL_ONLY: string[];
  FULL_ONLY_PATTERN: RegExp;
  SHARDS: number;
  PLAN_ENV: string;
  SUITE_ENV: string;
  DURATIONS_ENV: string;
  weights(suite?: { gate: boolean }): (file: string) => number;
  fullOnly(file: string): boolean;
  phaseOne(suite?: { gate: boolean }): string[];
  phaseTwo(suite?: { gate: boolean }): string;
  testFiles(): string[];
  makeShards(suite?: { gate: boolean }): string[][];
};

// eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest's sequencer is CommonJS (jest.config.js)
const LongestFirst = require("./shards/sequencer.cjs") as new (options: object) => {
  sort(tests: Array<{ path: string }>): Array<{ path: string }>;
};

const jestBin = path.join(plan.root, "node_modules", "jest", "bin", "jest.js");
const listed = new Map<string, Promise<string[]>>();
/** The files Jest selects with `args` (its own discovery, as the run uses it), relative and sorted; asked once per `args`. */
function listTests(args: string[]): Promise<string[]> {
  const key = JSON.stringify(args);
  if (!listed.has(key)) listed.set(key, askJest(args));
  return listed.get(key)!;
}

async function askJest(args: string[]): Promise<string[]> {
  const env = { ...process.env };
  delete env[plan.PLAN_ENV];
  const { stdout } = await promisify(execFile)(process.execPath, [jestBin, "--listTests", ...args], {
    cwd: plan.root,
    env,
  });
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("/"))
    .map((file) => path.relative(plan.root, file).split(path.sep).join("/"))
    .sort();
}
/** Any call that changes which module a later import gets (a shard's files share one registry). */
const MODULE_REPLACEMENT =
  /\bjest\s*\.\s*(mock|unmock|doMock|dontMock|deepUnmock|setMock|unstable_mockModule|enableAutomock|resetModules|isolateModules(Async)?)\b/;
const source = (file: string) => readFileSync(path.join(plan.root, file), "utf8");
const supportFiles = () =>
  readdirSync(path.join(plan.root, "test", "support"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) =>
      path.posix.join("test", path.relative(path.join(plan.root, "test"), path.join(entry.parentPath, entry.name))),
    );

describe("the full run's shards (test/shards/plan.cjs)", () => {
  it("hold every file Jest finds but the serial and isolated ones, each exactly once, and phase 1 runs every shard", async () => {
    expect(plan.makeShards()).toHaveLength(plan.SHARDS);
    const sharded = plan.makeShards().flat();
    expect(new Set(sharded).size).toBe(sharded.length);
    const everyFile = await listTests([]);
    expect(everyFile.length).toBeGreaterThan(100);
    expect([...sharded, ...plan.ISOLATED, ...everyFile.filter((file) => plan.SERIAL.test(file))].sort()).toEqual(
      everyFile,
    );
    const entries = Array.from({ length: plan.SHARDS }, (_, index) => `test/shards/${index + 1}.shard.ts`);
    expect(await listTests(plan.phaseOne())).toEqual([...entries, ...plan.ISOLATED].sort());
    expect(await listTests(["--testPathPatterns", plan.phaseTwo()])).toEqual(
      everyFile.filter((file) => plan.SERIAL.test(file)),
    );
    for (const [index, entry] of entries.entries()) expect(source(entry)).toContain(`defineShard(${index});`);
  }, 60_000);

  it("in the gate, hold every file but the full suite's own, which CONTRIBUTING.md lists by name", async () => {
    const everyFile = await listTests([]);
    for (const file of plan.FULL_ONLY) expect(everyFile).toContain(file);
    const fullOnly = everyFile.filter((file) => plan.fullOnly(file));
    expect(fullOnly.length).toBeGreaterThan(plan.FULL_ONLY.length); // the pattern's files too
    const gate = { gate: true };
    const sharded = plan.makeShards(gate).flat();
    expect(new Set(sharded).size).toBe(sharded.length);
    const isolated = plan.ISOLATED.filter((file) => !plan.fullOnly(file));
    // The serial files are the rate tests, all the full suite's: the gate has no phase 2.
    expect(plan.phaseTwo(gate)).toBe("");
    expect(sharded).toContain("test/web.browser.test.ts");
    expect([...sharded, ...isolated].sort()).toEqual(everyFile.filter((file) => !plan.fullOnly(file)));
    const entries = Array.from({ length: plan.SHARDS }, (_, index) => `test/shards/${index + 1}.shard.ts`);
    expect(await listTests(plan.phaseOne(gate))).toEqual([...entries, ...isolated].sort());
    // CONTRIBUTING.md names each file the gate leaves out, each file with a test or describe it skips for
    // the full suite (inFullSuite, itInFullSuite), and the pattern's files by the pattern.
    const contributing = source("CONTRIBUTING.md");
    const section = contributing.slice(contributing.indexOf("### The gate and the full suite"));
    const end = section.indexOf("and runs less of");
    expect(end).toBeGreaterThan(0);
    const leftOut = section.slice(section.indexOf("\n- "), end); // the list of what the gate leaves out
    // Any use of the markers but the import (a call, or a marker chosen in an expression); this file
    // names them only to find them.
    const marked = everyFile.filter(
      (file) =>
        file !== "test/shards.test.ts" &&
        /\b(?:inFullSuite|itInFullSuite)\b/.test(source(file).replace(/^import[^;]*;$/gm, "")),
    );
    expect(marked.length).toBeGreaterThan(0);
    const listed = [...leftOut.matchAll(/`(test\/[^`]+\.test\.ts)`/g)].map((match) => match[1]);
    expect([...new Set(listed)].sort()).toEqual(
      everyFile.filter((file) => plan.FULL_ONLY.includes(file) || marked.includes(file)),
    );
    expect(leftOut).toContain("`*.faults.test.ts`");
    expect(leftOut).toContain("`*.rates.test.ts`");
  }, 60_000);

  it("share no registry with a file that replaces modules, picks its own environment or is imported by another", () => {
    const files = plan.testFiles().filter((file) => !plan.SERIAL.test(file));
    const replacing = files.filter((file) => MODULE_REPLACEMENT.test(source(file)));
    expect(replacing.sort()).toEqual([...plan.ISOLATED].sort());
    // The helpers every shard shares must not replace modules either.
    expect(supportFiles().filter((file) => MODULE_REPLACEMENT.test(source(file)))).toEqual([]);
    // A docblock environment is ignored in a shard (its entry's environment counts).
    expect(files.filter((file) => /^\s*\/\*\*?(?:(?!\*\/)[\s\S])*@jest-environment/.test(source(file)))).toEqual([]);
    // A test file imported by another would have its tests registered under the importer.
    expect(
      files.filter((file) =>
        /(?:from\s+|import\s*\(?\s*|require\(\s*)["'][^"']*\.test(?:\.ts)?["']/.test(source(file)),
      ),
    ).toEqual([]);
  });

  it("hold no focused test: in a shard, `.only` would skip the other files' tests and the run would still pass", () => {
    const focused = [...plan.testFiles(), ...supportFiles()].filter((file) =>
      /\b(?:it|test|describe)\b(?:\s*\.\s*\w+)*\s*\.\s*only\b|\b(?:fit|fdescribe)\s*[.(]/.test(source(file)),
    );
    expect(focused).toEqual([]);
  });

  it.each([true, false])(
    "are balanced by the recorded seconds of their suite (gate: %s), and Jest starts the longest first",
    (gate) => {
      const weight = plan.weights({ gate });
      const shards = plan.makeShards({ gate });
      const sums = shards.map((files) => files.reduce((sum, file) => sum + weight(file), 0));
      expect(sums).toEqual([...sums].sort((a, b) => b - a));
      // Each file went to the lightest shard so far: no two shards differ by more than the heaviest file.
      const heaviest = Math.max(...shards.flat().map(weight));
      expect(sums[0]! - sums.at(-1)!).toBeLessThanOrEqual(heaviest);
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- recorded by scripts/test-durations.js
      const durations = require("./shards/durations.json") as Record<"gate" | "full", Record<string, number>>;
      const recorded = shards.flat().filter((file) => file in durations[gate ? "gate" : "full"]);
      expect(recorded.length).toBeGreaterThan(shards.flat().length / 2);
      expect(weight("test/not-recorded.test.ts")).toBeGreaterThan(0); // the median

      const saved = { plan: process.env[plan.PLAN_ENV], suite: process.env[plan.SUITE_ENV] };
      const byWeight = [...shards.flat()].sort((a, b) => weight(a) - weight(b));
      const [light, middle, heavy] = [byWeight[0]!, byWeight[Math.floor(byWeight.length / 2)]!, byWeight.at(-1)!];
      try {
        process.env[plan.PLAN_ENV] = JSON.stringify([[light], [heavy], [middle]]);
        process.env[plan.SUITE_ENV] = gate ? "gate" : "";
        const test = (file: string) => ({ path: path.join(plan.root, file) });
        const sorted = new LongestFirst({}).sort(
          ["test/shards/1.shard.ts", "test/shards/2.shard.ts", "test/shards/3.shard.ts"].map(test),
        );
        expect(sorted.map((entry) => path.basename(entry.path))).toEqual(["2.shard.ts", "3.shard.ts", "1.shard.ts"]);
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest's configuration is CommonJS
        expect((require("../jest.config.js") as { testSequencer: string }).testSequencer).toBe(
          "<rootDir>/test/shards/sequencer.cjs",
        );
      } finally {
        for (const [name, value] of [
          [plan.PLAN_ENV, saved.plan],
          [plan.SUITE_ENV, saved.suite],
        ] as const)
          if (value === undefined) delete process.env[name];
          else process.env[name] = value;
      }
    },
  );

  it("run their files in one registry, each under its own describe; a file that fails to load fails alone, and each file that ran records its duration", async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), "gw-shard-"));
    try {
      const report = path.join(scratch, "report.json");
      const durations = await mkdtemp(path.join(scratch, "durations-"));
      await promisify(execFile)(
        process.execPath,
        [jestBin, "--testMatch", "**/test/fixtures/shards/*.shard.ts", "--json", "--outputFile", report],
        { cwd: plan.root, env: { ...process.env, [plan.DURATIONS_ENV]: durations } },
      ).catch(() => {}); // it exits 1: the broken fixtures fail
      const recorded = (
        await Promise.all(readdirSync(durations).map((name) => readFile(path.join(durations, name), "utf8")))
      )
        .join("")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { file: string; seconds: number });
      expect(recorded.map(({ file }) => file)).toEqual([
        "test/fixtures/shards/first.ts",
        "test/fixtures/shards/second.ts",
      ]);
      expect(recorded[0]!.seconds).toBeGreaterThanOrEqual(0.2); // its afterAll's wait included
      const { testResults } = JSON.parse(await readFile(report, "utf8")) as {
        testResults: Array<{
          assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
        }>;
      };
      const results = testResults.flatMap((file) => file.assertionResults);
      expect(results.map(({ fullName, status }) => [fullName, status])).toEqual([
        ["test/fixtures/shards/first.ts runs", "passed"],
        ["test/fixtures/shards/broken.ts loads", "failed"],
        ["test/fixtures/shards/broken-inside.ts loads", "failed"],
        ["test/fixtures/shards/second.ts shares the first file's modules, after its afterAll", "passed"],
      ]);
      expect(results[1]!.failureMessages.join("")).toContain("this fixture fails while it loads");
      expect(results[2]!.failureMessages.join("")).toContain("this fixture fails inside one of its describes");
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
