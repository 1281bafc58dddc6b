import { readdirSync, readFileSync } from "node:fs";

/**
 * The CPU another process has spent so far, in ms, all its threads together (Linux: each thread's
 * /proc/<pid>/task/<tid>/schedstat, whose first field is its time on a CPU in nanoseconds; /proc's
 * `stat` counts in 10 ms ticks, too coarse for one request). A thread that ended between two readings
 * takes its time with it: the gateway's threads (the loop, libuv's pool, V8's helpers, the watchdog)
 * live as long as it does.
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

/**
 * The CPU the main thread has spent so far, in ms: the event loop's own, without the embedded
 * database's thread or the collector's helpers. process.threadCpuUsage from Node 23.9 (the types are
 * Node 20's); before it, on Linux, the main thread's schedstat (its thread id is the process id).
 * Called on the main thread only.
 */
export function threadCpuMs(): number {
  const { threadCpuUsage } = process as NodeJS.Process & { threadCpuUsage?: () => NodeJS.CpuUsage };
  if (threadCpuUsage === undefined)
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  const used = threadCpuUsage.call(process);
  return (used.user + used.system) / 1000;
}
