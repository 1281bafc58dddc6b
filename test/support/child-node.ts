/**
 * Node's flags for the gateway processes the tests start (servers and workers, `dist/`). Such a
 * process lives for seconds, so the budget a WebAssembly function (the embedded database's, the
 * schema engine's) must use up before V8 optimises it is raised out of reach: optimising in the
 * background cost about 1.5 s of CPU per start that the process never earned back (BENCHMARKS.md,
 * "V8's WebAssembly tier-up"). The code V8 runs means the same either way; the admin commands do this
 * themselves (src/cli.ts), and `npm start` keeps V8's default.
 */
export const CHILD_NODE_FLAGS = ["--wasm-tiering-budget=2000000000"];
