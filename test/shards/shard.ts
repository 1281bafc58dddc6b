import path from "node:path";

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plan is shared with scripts/test.js (CommonJS)
const plan = require("./plan.cjs") as { root: string; shards(): string[][] };

/** Registers the test files of shard `index` (plan.cjs). */
export function defineShard(index: number): void {
  const files = plan.shards()[index];
  if (files === undefined) throw new Error(`no shard ${index} in test/shards/plan.cjs`);
  registerFiles(files);
}

/**
 * Registers test files (relative to the repository), each under a describe named by its path. The files
 * are required while Jest collects, so their describes, tests and hooks nest under it and run as they
 * would alone: hooks stay within their file, and each file's afterAll releases what it started before the
 * next file's tests begin. They share this registry: a module they both import loads once.
 */
export function registerFiles(files: string[]): void {
  for (const file of files) {
    describe(file, () => {
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports -- collected in this registry, under this describe
        require(path.join(plan.root, file));
      } catch (error) {
        // A file that fails to load fails as one test of its own; the shard's other files still run.
        it("loads", () => {
          throw error;
        });
      }
    });
  }
}
