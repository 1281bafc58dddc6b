import { appendFileSync } from "node:fs";
import path from "node:path";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plan is shared with scripts/test.js (CommonJS)
const plan = require("./plan.cjs") as { root: string; DURATIONS_ENV: string; shards(): string[][] };

/** Registers the test files of shard `index` (plan.cjs). */
export function defineShard(index: number): void {
  const files = plan.shards()[index];
  if (files === undefined) throw new Error(`no shard ${index} in test/shards/plan.cjs`);
  registerFiles(files);
}

/**
 * Registers test files (relative to the repository), each under a describe named by its path, all in
 * this one module registry: a module they both import loads once. The files are required while Jest
 * collects, so every file's top-level code runs before the first file's tests; their describes, tests
 * and hooks nest under their own describe, so hooks stay within their file, and each file's afterAll
 * releases what it started before the next file's tests begin.
 */
export function registerFiles(files: string[]): void {
  for (const file of files) {
    describe(file, () => {
      const recorded = recordDuration(file);
      const state = circusState();
      const own = state?.currentDescribeBlock;
      const focused = state?.hasFocusedTests;
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- collected in this registry, under this describe
        require(path.join(plan.root, file));
      } catch (error) {
        // A throw inside one of the file's own describes leaves Jest collecting into that block: the
        // next files would nest under it and run its hooks. Back to the file's own block, the file
        // fails as one test of its own and the shard's other files run as they would alone. Without
        // Jest's state (another Jest), the whole shard fails instead.
        if (state === undefined || own === undefined) throw error;
        // What the file registered before the throw is dropped: run alone, none of it would run (a
        // beforeAll that started a server, its afterAll never registered, would leak into the shard).
        state.currentDescribeBlock = own;
        state.hasFocusedTests = focused;
        own.children.length = 0;
        own.hooks.length = 0;
        it("loads", () => {
          throw error;
        });
        return;
      }
      recorded?.();
    });
  }
}

/**
 * With DURATIONS_ENV set (scripts/test-durations.js), records how long a file's tests took, its own
 * hooks included, in a file of this process's in that folder: the shards are balanced by these times.
 * Called before the file registers its hooks; what it returns, after (afterAll hooks run in order).
 */
function recordDuration(file: string): (() => void) | undefined {
  const folder = process.env[plan.DURATIONS_ENV];
  if (!folder) return undefined;
  let started = 0;
  beforeAll(() => {
    started = Date.now();
  });
  return () =>
    afterAll(() => {
      const seconds = (Date.now() - started) / 1000;
      appendFileSync(path.join(folder, `${process.pid}.jsonl`), `${JSON.stringify({ file, seconds })}\n`);
    });
}

/** The part of jest-circus's collection state this needs: where new tests and hooks go. */
interface CircusState {
  currentDescribeBlock: { children: unknown[]; hooks: unknown[] };
  hasFocusedTests: boolean | undefined;
}

function circusState(): CircusState | undefined {
  const symbol = Object.getOwnPropertySymbols(globalThis).find((s) => s.description === "JEST_STATE_SYMBOL");
  return symbol === undefined ? undefined : (globalThis as unknown as Record<symbol, CircusState>)[symbol];
}
