import { monitorEventLoopDelay } from "node:perf_hooks";

/** What another caller saw while an attack ran: each /healthz poll's time and the loop's longest stall. */
export interface VictimView {
  /** Polls that got an answer, and the statuses of all of them. */
  readonly polls: number;
  readonly statuses: readonly number[];
  /** The slowest poll, in ms. */
  readonly slowestPollMs: number;
  /** The longest the gateway's event loop (this process's: startApp runs in it) went without a turn, in ms. */
  readonly longestStallMs: number;
}

/**
 * Polls `url`/healthz every `everyMs` (one poll at a time) and watches this process's event loop, until
 * the returned function is called; that resolves what was seen. The gateway under test runs in this
 * process, so a stall of its loop is a stall of every request it serves.
 */
export function watchAsVictim(url: string, everyMs = 50): () => Promise<VictimView> {
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const statuses: number[] = [];
  let slowestPollMs = 0;
  let watching = true;
  const polling = (async () => {
    while (watching) {
      const started = performance.now();
      const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(15_000) });
      await res.arrayBuffer();
      statuses.push(res.status);
      slowestPollMs = Math.max(slowestPollMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return async () => {
    watching = false;
    await polling;
    loop.disable();
    return {
      polls: statuses.length,
      statuses,
      slowestPollMs,
      longestStallMs: loop.max / 1e6,
    };
  };
}
