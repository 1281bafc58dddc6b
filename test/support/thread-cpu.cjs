"use strict";
const { readFileSync } = require("node:fs");

/**
 * The CPU the main thread has spent so far, in ms: the event loop's own, without the embedded
 * database's thread or the collector's helpers (process.cpuUsage counts every thread).
 * process.threadCpuUsage from Node 23.9; before it, on Linux, the main thread's schedstat (its thread
 * id is the process id), whose first field is its time on a CPU in nanoseconds. Called on the main
 * thread only. CommonJS: the loop-hold probe, preloaded into gateways, reads it too.
 */
const threadCpuMs = process.threadCpuUsage
  ? () => {
      const used = process.threadCpuUsage();
      return (used.user + used.system) / 1000;
    }
  : () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;

module.exports = { threadCpuMs };
