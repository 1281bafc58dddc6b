// Preloaded (`--require`) into a benchmarked server so the benchmark can read its memory as the
// process itself sees it: on SIGUSR2 it collects garbage twice, then writes process.memoryUsage()
// as JSON to BENCH_MEMORY_FILE. The same probe goes into the gateway and its baseline, so both are
// read the same way; without a forced collection a reading includes garbage the handshakes left.
import { writeFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const file = process.env.BENCH_MEMORY_FILE;
if (file) {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  process.on("SIGUSR2", () => {
    gc();
    gc();
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
