// Runs in every test file's module registry (a shard's files share one: test/shards/): the embedded
// databases' pool (embedded-pool.ts), if a file used it, closes when the registry's last file is done.
// Found through globalThis, not imported: importing it here would load the gateway's modules before a
// test file that replaces one of them (test/shards/plan.cjs ISOLATED) could do so.
afterAll(async () => {
  const close = (globalThis as Record<symbol, unknown>)[Symbol.for("cargo-gateway.test.closeEmbeddedPool")];
  if (typeof close === "function") await (close as () => Promise<void>)();
});
