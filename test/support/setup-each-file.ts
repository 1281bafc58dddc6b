import { closeEmbeddedPool } from "./embedded-pool";

// Runs in every test file's module registry (a shard's files share one: test/shards/): the pool's
// databases close when the registry's last test file is done.
afterAll(() => closeEmbeddedPool());
