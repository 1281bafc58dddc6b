import { readdirSync, readFileSync } from "node:fs";

/**
 * The CPU another process has spent so far, in ms, all its threads together (Linux: each thread's
 * /proc/<pid>/task/<tid>/schedstat, whose first field is its time on a CPU in nanoseconds; /proc's
 * `stat` counts in 10 ms ticks, too coarse for one request). A thread that ended between two readings
 * takes its time with it: the gateway's threads (the loop, the embedded database's, libuv's pool, V8's
 * helpers, the watchdog) live as long as it does. The benchmarks and the tests read the gateway with it.
 */
export function processCpuMs(pid: number): number {
  let nanoseconds = 0;
  for (const thread of readdirSync(`/proc/${pid}/task`)) {
    try {
      nanoseconds += Number(readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]);
    } catch {
      // the thread ended while the folder was read
    }
  }
  return nanoseconds / 1e6;
}
