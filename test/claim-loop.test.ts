import pino from "pino";
import { ClaimLoop } from "../src/delivery/claim-loop";
import { within } from "./support/webhooks";

const HOUR = 3_600_000;

/** A loop whose rounds answer from `answers` (then false); each round's start is observable. */
function loopOver(answers: Array<boolean | Error>, pollMs = HOUR) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let rounds = 0;
  let onRound: (() => void) | undefined;
  const loop = new ClaimLoop({
    pollMs,
    log,
    claimOnce: () => {
      rounds++;
      onRound?.();
      const answer = answers.shift() ?? false;
      return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
    },
  });
  return {
    loop,
    lines,
    rounds: () => rounds,
    /** Resolves once `n` rounds have started. */
    roundsStarted: async (n: number): Promise<void> => {
      while (rounds < n) await new Promise<void>((r) => (onRound = r));
    },
  };
}

describe("the claim loop", () => {
  it("claims at once on start, again at once while a round says there may be more, then waits", async () => {
    const { loop, rounds, roundsStarted } = loopOver([true, true, false]);
    loop.start();
    expect(loop.running).toBe(true);
    await roundsStarted(3);
    await new Promise((r) => setImmediate(r)); // time for a fourth round, were one due
    expect(rounds()).toBe(3);
    await loop.stop();
    expect(loop.running).toBe(false);
  });

  it("claims again when woken instead of waiting for the poll", async () => {
    const { loop, rounds, roundsStarted } = loopOver([]); // the next poll is an hour away
    loop.start();
    try {
      await roundsStarted(1);
      await new Promise((r) => setImmediate(r)); // the loop is waiting now
      expect(rounds()).toBe(1);
      loop.wake();
      await within("the round the wake starts", 5_000, roundsStarted(2));
      expect(rounds()).toBe(2);
    } finally {
      await loop.stop();
    }
  });

  it("claims again after pollMs when nothing wakes it, not before", async () => {
    jest.useFakeTimers();
    try {
      const { loop, rounds } = loopOver([], 1_000);
      loop.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(rounds()).toBe(1);
      await jest.advanceTimersByTimeAsync(999);
      expect(rounds()).toBe(1);
      await jest.advanceTimersByTimeAsync(1);
      expect(rounds()).toBe(2);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(rounds()).toBe(3);
      await loop.stop();
    } finally {
      jest.useRealTimers();
    }
  });

  it("logs a failed claim and goes on", async () => {
    const { loop, lines, roundsStarted } = loopOver([new Error("database unavailable")], 5);
    loop.start();
    await roundsStarted(2);
    await loop.stop();
    expect(lines[0]).toMatchObject({ level: 40, msg: "claiming deliveries failed; will try again" });
  });

  it("stops waiting at once when stopped, and claims no more", async () => {
    const { loop, rounds, roundsStarted } = loopOver([]);
    loop.start();
    await roundsStarted(1);
    await loop.stop(); // resolves although the next poll is an hour away
    loop.wake();
    await new Promise((r) => setImmediate(r));
    expect(rounds()).toBe(1);
  });

  it("lets the round under way end before its stop resolves, and runs none after it", async () => {
    let finishRound!: (more: boolean) => void;
    let rounds = 0;
    const loop = new ClaimLoop({
      pollMs: HOUR,
      log: pino({ level: "silent" }),
      claimOnce: () => {
        rounds++;
        return new Promise<boolean>((resolve) => (finishRound = resolve));
      },
    });
    loop.start();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    finishRound(true); // "more", but stopped
    await stopping;
    expect(rounds).toBe(1);
  });

  it("started again while its stopped round is under way, goes on as one loop (never two claiming at once)", async () => {
    let inFlight = 0;
    let most = 0;
    let rounds = 0;
    const finishers: Array<(more: boolean) => void> = [];
    const loop = new ClaimLoop({
      pollMs: HOUR,
      log: pino({ level: "silent" }),
      claimOnce: () => {
        rounds++;
        most = Math.max(most, ++inFlight);
        return new Promise<boolean>((resolve) =>
          finishers.push((more) => {
            inFlight--;
            resolve(more);
          }),
        );
      },
    });
    loop.start();
    const stopping = loop.stop();
    loop.start(); // before the first round has ended
    await new Promise((r) => setImmediate(r));
    expect(rounds).toBe(1);
    finishers.shift()!(true); // "more": the loop, running again, claims at once
    await new Promise((r) => setImmediate(r));
    expect(rounds).toBe(2);
    expect(most).toBe(1);
    const stopped = loop.stop();
    finishers.shift()!(false);
    await Promise.all([stopping, stopped]);
    expect(rounds).toBe(2);
  });
});
