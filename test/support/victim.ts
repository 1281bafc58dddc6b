import { monitorEventLoopDelay } from "node:perf_hooks";
import { threadCpuMs } from "./process-cpu";

/**
 * What a victim must see while an attack runs: /healthz answering within this. Asserted as the CPU
 * the gateway spent between two turns of its event loop (what a poll had to wait for), which a loaded
 * machine does not inflate; the wall-clock figures are reported beside it.
 */
export const HEALTHZ_WITHIN_MS = 500;

/** What another caller saw while an attack ran. */
export interface VictimView {
  /** The CPU this process used meanwhile, every thread, in ms (the gateway runs in it: startApp). */
  readonly cpuMs: number;
  /** The CPU the event loop's thread used meanwhile, in ms: what the longest hold is a part of. */
  readonly loopCpuMs: number;
  readonly polls: number;
  /** Polls that failed or answered other than 200. */
  readonly failures: readonly string[];
  /** The slowest poll, in ms of wall clock. */
  readonly slowestMs: number;
  /** The longest the event loop went without a turn, in ms of wall clock. */
  readonly longestStallMs: number;
  /** What held the loop: the most CPU its thread spent between two turns of a 10 ms timer, at most the wall time between them, in ms. */
  readonly longestHoldCpuMs: number;
}

/**
 * Polls `url`/healthz (one poll at a time, `everyMs` apart) and watches this process's event loop until
 * the returned function is called, which resolves what was seen. The gateway under test runs in this
 * process: a stretch of CPU between two turns of its loop is a wait for every request it serves.
 */
export function watchAsVictim(url: string, everyMs = 25): () => Promise<VictimView> {
  // The test process's heap holds the earlier files' garbage (a shard shares one registry): collected
  // now, a major collection is not counted as the gateway holding its loop (the tests run with --expose-gc).
  (globalThis as { gc?: () => void }).gc?.();
  const durations: number[] = [];
  const failures: string[] = [];
  let running = true;
  const stalls = monitorEventLoopDelay({ resolution: 10 });
  stalls.enable();
  const cpu = process.cpuUsage();
  const loopCpu = threadCpuMs();
  let longestHoldCpuMs = 0;
  let lastTick = threadCpuMs();
  let lastTickAt = performance.now();
  const ticker = setInterval(() => {
    const now = threadCpuMs();
    const at = performance.now();
    // The loop was held no longer than the CPU its thread spent between two turns (a loaded machine
    // stretches the wall time, not that; the embedded database's thread and the collector's helpers
    // do not count), nor than the wall time between them.
    const cpuMs = now - lastTick;
    longestHoldCpuMs = Math.max(longestHoldCpuMs, Math.min(cpuMs, at - lastTickAt));
    lastTick = now;
    lastTickAt = at;
  }, 10);
  const polling = (async () => {
    while (running) {
      const started = performance.now();
      try {
        // Only a guard against a poll that never ends: the bound is the CPU that held the loop, not this.
        const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(15_000) });
        await res.arrayBuffer();
        if (res.status !== 200) failures.push(`status ${res.status}`);
      } catch (error) {
        failures.push((error as Error).name);
      }
      durations.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    running = false;
    await polling;
    stalls.disable();
    clearInterval(ticker);
    const spent = process.cpuUsage(cpu);
    return {
      cpuMs: Math.round((spent.user + spent.system) / 1000),
      loopCpuMs: Math.round(threadCpuMs() - loopCpu),
      polls: durations.length,
      failures,
      slowestMs: Math.round(Math.max(0, ...durations)),
      longestStallMs: Math.round(stalls.max / 1e6),
      longestHoldCpuMs: Math.round(longestHoldCpuMs),
    };
  };
}

/**
 * Every poll answered 200, at least `minPolls` of them (a long attack is seen by several), and the
 * gateway never held its loop for HEALTHZ_WITHIN_MS of CPU.
 */
export function expectVictimServed(view: VictimView, { minPolls = 1 }: { minPolls?: number } = {}): void {
  expect(view.failures).toEqual([]);
  expect(view.polls).toBeGreaterThanOrEqual(minPolls);
  expect(view.longestHoldCpuMs).toBeLessThan(HEALTHZ_WITHIN_MS);
}
