// Which suite a test runs in: the gate (`npm test`, what CI runs) or the full suite (`npm run
// test:full`, and any direct Jest run). CONTRIBUTING.md, "The gate and the full suite".
// eslint-disable-next-line @typescript-eslint/no-require-imports -- the plan is CommonJS, shared with scripts/test.js
const { SUITE_ENV } = require("../shards/plan.cjs") as { SUITE_ENV: string };

/** True in the gate; false in the full suite and in a direct Jest run. */
export const IN_GATE = process.env[SUITE_ENV] === "gate";

/**
 * A property or fuzz test's run count: an eighth of `full` in the gate, all of it otherwise. Its seed is
 * fixed, so the gate's runs are the first of the full suite's.
 */
export function runsInSuite(full: number): number {
  return IN_GATE ? Math.max(1, Math.ceil(full / 8)) : full;
}

/**
 * `describer` (describe, or `describeBackend(…)`) for tests the gate leaves to the full suite (CONTRIBUTING.md,
 * "The gate and the full suite", lists them: a command or a worker run as a process of its own, the
 * migrations replayed): in the gate it skips them, naming the full suite; otherwise it is `describer`.
 */
export function inFullSuite(describer: jest.Describe = describe): jest.Describe {
  if (!IN_GATE) return describer;
  return ((name: string, fn: () => void) =>
    describe.skip(`${name} — in the full suite (npm run test:full)`, fn)) as unknown as jest.Describe;
}

/**
 * `it` for one test the gate leaves to the full suite (as `inFullSuite`): one that runs a gateway, a
 * worker or a command as a process of its own, a CPU threshold, a behaviour test's PostgreSQL half.
 */
export const itInFullSuite: jest.It = IN_GATE
  ? (((name: string, fn: jest.ProvidesCallback, timeout?: number) =>
      it.skip(`${name} — in the full suite (npm run test:full)`, fn, timeout)) as unknown as jest.It)
  : it;
