import pino from "pino";
import type { AttemptOutcome } from "../src/delivery/delivery.store";
import { CLOSING_FAILURES, OutcomeRecorder, RECORD_BATCH, RECORD_LINGER_MS } from "../src/delivery/outcome-recorder";

let serial = 0;
const outcome = (): AttemptOutcome => {
  serial++;
  return {
    deliveryId: `d${serial}`,
    leaseToken: `t${serial}`,
    startedAt: new Date(),
    durationMs: 1,
    statusCode: 204,
    error: null,
    status: "DELIVERED",
    nextAttemptAt: null,
  };
};

/** The recorder's waits (linger, backoff), each ended by the test; `next` answers them in order as they begin. */
function manualSleep() {
  const waits: Array<{ ms: number; end: () => void }> = [];
  let answered = 0;
  let onWait: (() => void) | undefined;
  return {
    waits,
    sleep: (ms: number) =>
      new Promise<void>((resolve) => {
        waits.push({ ms, end: resolve });
        onWait?.();
      }),
    async next(): Promise<{ ms: number; end: () => void }> {
      while (waits.length <= answered) await new Promise<void>((r) => (onWait = r));
      return waits[answered++]!;
    },
  };
}

function recorderOver(record: (outcomes: AttemptOutcome[]) => Promise<number>) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  const timer = manualSleep();
  let settled = 0;
  const recorder = new OutcomeRecorder({ record, log, sleep: timer.sleep, onSettled: () => settled++ });
  return { recorder, timer, lines, settled: () => settled };
}

describe("the outcome recorder", () => {
  it("while live, lets the first outcome linger so that outcomes arriving meanwhile share its statement", async () => {
    const batches: string[][] = [];
    const { recorder, timer } = recorderOver((outcomes) => {
      batches.push(outcomes.map((o) => o.deliveryId));
      return Promise.resolve(outcomes.length);
    });
    recorder.mode = "live";
    const [a, b, c] = [outcome(), outcome(), outcome()];
    const linger = timer.next();
    recorder.add(a);
    expect((await linger).ms).toBe(RECORD_LINGER_MS);
    recorder.add(b);
    recorder.add(c);
    expect(recorder.busy).toBe(true);
    expect(batches).toEqual([]);
    (await linger).end();
    await recorder.flush();
    expect(batches).toEqual([[a.deliveryId, b.deliveryId, c.deliveryId]]);
    expect(recorder.backlog).toBe(0);
    expect(recorder.busy).toBe(false);
  });

  it("records at most RECORD_BATCH outcomes a statement, oldest first", async () => {
    const batches: string[][] = [];
    const { recorder, timer } = recorderOver((outcomes) => {
      batches.push(outcomes.map((o) => o.deliveryId));
      return Promise.resolve(outcomes.length);
    });
    recorder.mode = "live";
    const added = Array.from({ length: RECORD_BATCH * 2 + 1 }, outcome);
    const linger = timer.next();
    for (const o of added) recorder.add(o);
    (await linger).end();
    await recorder.flush();
    expect(batches.map((b) => b.length)).toEqual([RECORD_BATCH, RECORD_BATCH, 1]);
    expect(batches.flat()).toEqual(added.map((o) => o.deliveryId));
    expect(timer.waits).toHaveLength(1);
  });

  it("while live, retries a failed recording with a doubling wait until it succeeds, recording each outcome once", async () => {
    let failuresLeft = 3;
    const recorded: string[] = [];
    const { recorder, timer, lines } = recorderOver((outcomes) => {
      if (failuresLeft-- > 0) return Promise.reject(new Error("database unavailable"));
      recorded.push(...outcomes.map((o) => o.deliveryId));
      return Promise.resolve(outcomes.length);
    });
    recorder.mode = "live";
    const only = outcome();
    let wait = timer.next();
    recorder.add(only);
    const waited: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { ms, end } = await wait;
      waited.push(ms);
      wait = timer.next();
      end();
    }
    await recorder.flush();
    expect(waited).toEqual([RECORD_LINGER_MS, 100, 200, 400]);
    expect(recorded).toEqual([only.deliveryId]);
    expect(lines.filter((l) => l.msg.startsWith("recording delivery outcomes failed"))).toHaveLength(3);
  });

  it("while closing, gives up after CLOSING_FAILURES failures in a row and keeps the outcomes", async () => {
    let calls = 0;
    const { recorder, timer, lines } = recorderOver(() => {
      calls++;
      return Promise.reject(new Error("database unavailable"));
    });
    recorder.mode = "closing";
    recorder.add(outcome());
    const done = recorder.flush();
    for (let i = 0; i < CLOSING_FAILURES; i++) (await timer.next()).end();
    await done;
    expect(calls).toBe(CLOSING_FAILURES + 1);
    expect(recorder.backlog).toBe(1);
    expect(recorder.busy).toBe(false);
    expect(lines.at(-1)).toMatchObject({ level: 50, msg: expect.stringContaining("stopping without recording") });
  });

  it("says how many outcomes were fenced out (their lease taken over)", async () => {
    const { recorder, timer, lines } = recorderOver((outcomes) => Promise.resolve(outcomes.length - 1));
    recorder.mode = "live";
    const linger = timer.next();
    recorder.add(outcome());
    recorder.add(outcome());
    (await linger).end();
    await recorder.flush();
    expect(lines).toEqual([expect.objectContaining({ level: 40, fencedOut: 1 })]);
  });

  it("while closing, records at once, takes the outcomes added during a round into it, and reports each round's end", async () => {
    const rounds: number[] = [];
    let gate!: () => void;
    const { recorder, timer, settled } = recorderOver((outcomes) => {
      rounds.push(outcomes.length);
      if (rounds.length > 1) return Promise.resolve(outcomes.length);
      return new Promise<number>((resolve) => (gate = () => resolve(outcomes.length)));
    });
    recorder.mode = "closing";
    recorder.add(outcome());
    expect(rounds).toEqual([1]);
    recorder.add(outcome()); // while the first statement runs
    recorder.add(outcome());
    expect(recorder.busy).toBe(true);
    gate();
    await recorder.flush();
    expect(rounds).toEqual([1, 2]);
    expect([recorder.backlog, recorder.busy, settled()]).toEqual([0, false, 1]);
    expect(timer.waits).toEqual([]);
  });
});
