// Preloaded (`--require`) into a benchmarked server so the benchmark can read its memory as the
// process itself sees it: on SIGUSR2 it collects garbage twice, then writes process.memoryUsage()
// as JSON to BENCH_MEMORY_FILE. The same probe goes into the gateway and its baseline, so both are
// read the same way; without a forced collection a reading includes garbage the handshakes left.
import { writeFileSync } from "node:fs";
import path from "node:path";
import { setFlagsFromString, writeHeapSnapshot } from "node:v8";
import { runInNewContext } from "node:vm";

const file = process.env.BENCH_MEMORY_FILE;
let readings = 0;
if (file) {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  process.on("SIGUSR2", () => {
    gc();
    gc();
    // BENCH_HEAP_SNAPSHOTS=<dir>: a heap snapshot at each reading too (heap-diff.ts compares two).
    const snapshots = process.env.BENCH_HEAP_SNAPSHOTS;
    if (snapshots) writeHeapSnapshot(path.join(snapshots, `${process.pid}-${(readings += 1)}.heapsnapshot`));
    writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
}
