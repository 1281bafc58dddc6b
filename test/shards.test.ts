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
  SHARDS: number;
  testFiles(): string[];
  shards(): string[][];
};

describe("the full run's shards (test/shards/plan.cjs)", () => {
  it("hold every test file but the serial and isolated ones, each exactly once", () => {
    const sharded = plan.shards().flat();
    const expected = plan.testFiles().filter((file) => !plan.SERIAL.test(file) && !plan.ISOLATED.includes(file));
    expect([...sharded].sort()).toEqual(expected);
    expect(new Set(sharded).size).toBe(sharded.length);
    expect(expected.length).toBeGreaterThan(100);
  });

  it("each has one entry file that Jest runs, defining it", () => {
    const entries = readdirSync(path.join(plan.root, "test", "shards"))
      .filter((name) => name.endsWith(".shard.ts"))
      .sort((a, b) => parseInt(a) - parseInt(b));
    expect(
      entries.map(
        (name) => readFileSync(path.join(plan.root, "test", "shards", name), "utf8").match(/defineShard\((\d+)\)/)?.[1],
      ),
    ).toEqual(Array.from({ length: plan.SHARDS }, (_, index) => String(index)));
  });

  it("share no registry with a file that replaces modules for everything loaded after it", () => {
    const replacing = plan
      .testFiles()
      .filter((file) =>
        /\bjest\.(mock|doMock|resetModules|isolateModules)\(/.test(readFileSync(path.join(plan.root, file), "utf8")),
      );
    expect(replacing.filter((file) => !plan.SERIAL.test(file)).sort()).toEqual([...plan.ISOLATED].sort());
  });

  it("run their files in one registry, each under its own describe, and a file that fails to load fails alone", async () => {
    const scratch = await mkdtemp(path.join(os.tmpdir(), "gw-shard-"));
    try {
      const report = path.join(scratch, "report.json");
      const jest = path.join(plan.root, "node_modules", "jest", "bin", "jest.js");
      await promisify(execFile)(
        process.execPath,
        [jest, "--testMatch", "**/test/fixtures/shards/*.shard.ts", "--json", "--outputFile", report],
        { cwd: plan.root },
      ).catch(() => {}); // it exits 1: the broken fixture fails
      const { testResults } = JSON.parse(await readFile(report, "utf8")) as {
        testResults: Array<{
          assertionResults: Array<{ fullName: string; status: string; failureMessages: string[] }>;
        }>;
      };
      const results = testResults.flatMap((file) => file.assertionResults);
      expect(results.map(({ fullName, status }) => [fullName, status])).toEqual([
        ["test/fixtures/shards/first.ts runs", "passed"],
        ["test/fixtures/shards/broken.ts loads", "failed"],
        ["test/fixtures/shards/second.ts shares the first file's modules, after its afterAll", "passed"],
      ]);
      expect(results[1]!.failureMessages.join("")).toContain("this fixture fails while it loads");
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
