"use strict";
/**
 * Preloaded (`node --require`) into a gateway process a test starts with `watchLoop`: measures the
 * longest the gateway's event loop was held, as the CPU its main thread spent between two turns of a
 * 10 ms timer, at most the wall time between them. Every request the gateway serves waits that long;
 * a loaded machine stretches the wall time, not the main thread's CPU, and the collector's helper
 * threads and libuv's pool do not count. Read and reset over the IPC channel the test opened; a read
 * also answers the main thread's CPU since the reset.
 */
const { threadCpuMs } = require("./thread-cpu.cjs");

let lastCpu = threadCpuMs();
let lastAt = performance.now();
let longest = { cpuMs: 0, wallMs: 0 };
/** The main thread's CPU at the last reset: a read answers what it spent since, beside the longest hold. */
let cpuAtReset = lastCpu;

/** The stretch since the last turn, counted into the longest. */
const turn = () => {
  const cpu = threadCpuMs();
  const at = performance.now();
  const held = { cpuMs: Math.min(cpu - lastCpu, at - lastAt), wallMs: at - lastAt };
  if (held.cpuMs > longest.cpuMs) longest = held;
  lastCpu = cpu;
  lastAt = at;
};

setInterval(turn, 10).unref();

process.on("message", (message) => {
  if (message === "loop-hold:reset") {
    turn();
    longest = { cpuMs: 0, wallMs: 0 };
    cpuAtReset = lastCpu;
    process.send({ loopHold: "reset" });
  } else if (message === "loop-hold:read") {
    // A hold that ended with this message is counted here: its timer turn may not have come yet.
    turn();
    process.send({
      loopHold: "read",
      cpuMs: Math.round(longest.cpuMs),
      wallMs: Math.round(longest.wallMs),
      spentCpuMs: Math.round(lastCpu - cpuAtReset),
    });
  }
});
// The channel must not keep the gateway alive: it ends on SIGTERM as `npm start` does.
process.channel?.unref();
