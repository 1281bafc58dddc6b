/**
 * Node's flags for the gateway processes the tests start (servers and workers, `dist/`). Such a
 * process lives for seconds, so V8 never tiers the embedded database's WebAssembly up: optimising its
 * hot functions in the background costs about 1.5 s of CPU per start that the process never earns
 * back (BENCHMARKS.md, "Test runs and commands"). The code V8 runs means the same either way; the
 * admin commands do this themselves (src/cli.ts), and `npm start` keeps V8's default.
 */
export const CHILD_NODE_FLAGS = ["--wasm-tiering-budget=2000000000"];
