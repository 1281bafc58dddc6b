// One shard of the full run (test/shards/plan.cjs, scripts/test.js).
import { defineShard } from "./shard";

defineShard(7);
