import pino from "pino";
import {
  APPENDED_TABLES_EVERY,
  createTableUpkeep,
  embeddedVacuumTables,
  type TableUpkeep,
} from "../src/db/table-upkeep";

/**
 * An upkeep over a vacuum that runs until the test ends it, on a clock the test moves; the rest
 * between runs is a real (short) timer.
 */
function upkeepOver(threshold: number, restFactor: number) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: "debug" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let clock = 0;
  const runs: Array<{ end: () => void; fail: (error: Error) => void }> = [];
  let onRun: (() => void) | undefined;
  const upkeep: TableUpkeep = createTableUpkeep({
    threshold,
    restFactor,
    log,
    done: "upkeep ran",
    now: () => clock,
    run: () =>
      new Promise<void>((resolve, reject) => {
        runs.push({ end: resolve, fail: reject });
        onRun?.();
      }),
  });
  return {
    upkeep,
    lines,
    runs,
    advance: (ms: number) => void (clock += ms),
    /** Resolves once `n` runs have started. */
    runsStarted: async (n: number): Promise<void> => {
      while (runs.length < n) await new Promise<void>((r) => (onRun = r));
    },
  };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("the tables' upkeep, paced by the rows written", () => {
  it("vacuums once the changed rows reach the threshold, not before", async () => {
    const { upkeep, runs } = upkeepOver(100, 0);
    upkeep.changed(60);
    upkeep.changed(39);
    expect(runs).toHaveLength(0);
    upkeep.changed(1);
    expect(runs).toHaveLength(1);
    runs[0]!.end();
    await upkeep.stop();
  });

  it("never runs two at once: rows changed during a run start the next one when it ends", async () => {
    const { upkeep, runs, runsStarted } = upkeepOver(100, 0);
    upkeep.changed(100);
    upkeep.changed(250);
    upkeep.changed(100);
    expect(runs).toHaveLength(1);
    runs[0]!.end();
    await runsStarted(2);
    runs[1]!.end();
    await settle();
    await settle();
    // The 350 rows counted during the first run were all taken by the second.
    expect(runs).toHaveLength(2);
    await upkeep.stop();
  });

  it("rests restFactor times the last run's duration before the next", async () => {
    const { upkeep, runs, advance, runsStarted } = upkeepOver(100, 4);
    upkeep.changed(100);
    advance(10); // the run took 10 ms of the upkeep's clock: the next waits 40 ms
    runs[0]!.end();
    await settle();
    upkeep.changed(100);
    await new Promise((r) => setTimeout(r, 20));
    expect(runs).toHaveLength(1); // a real 20 ms passed, the clock did not move: still resting
    advance(40);
    await runsStarted(2); // the rest's timer fires (within 40 ms real) and finds the clock past it
    runs[1]!.end();
    await upkeep.stop();
  });

  it("logs a failed run and waits for another threshold of rows before the next", async () => {
    const { upkeep, runs, lines, runsStarted } = upkeepOver(100, 0);
    upkeep.changed(100);
    runs[0]!.fail(new Error("database closed"));
    await settle();
    await settle();
    expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(["the tables' upkeep failed"]);
    upkeep.changed(99);
    await settle();
    expect(runs).toHaveLength(1);
    upkeep.changed(1);
    await runsStarted(2);
    runs[1]!.end();
    await upkeep.stop();
  });

  it("stop waits for a run in progress and starts none after it", async () => {
    const { upkeep, runs } = upkeepOver(100, 0);
    upkeep.changed(100);
    let stopped = false;
    const stopping = upkeep.stop().then(() => (stopped = true));
    await settle();
    expect(stopped).toBe(false);
    runs[0]!.end();
    await stopping;
    upkeep.changed(1_000);
    await settle();
    expect(runs).toHaveLength(1);
  });

  it("starts no run after stop for rows counted during the run that stop waited for", async () => {
    const { upkeep, runs } = upkeepOver(100, 0);
    upkeep.changed(100);
    upkeep.changed(500); // due as soon as this run ends
    const stopping = upkeep.stop();
    runs[0]!.end();
    await stopping;
    await settle();
    await settle();
    expect(runs).toHaveLength(1);
  });

  it("stop ends a rest in progress: no run starts after it", async () => {
    const { upkeep, runs, advance } = upkeepOver(100, 50);
    upkeep.changed(100);
    advance(1);
    runs[0]!.end();
    await settle();
    upkeep.changed(100); // due, but resting for 50 ms
    await upkeep.stop();
    advance(10_000);
    await new Promise((r) => setTimeout(r, 120)); // past the rest's timer
    expect(runs).toHaveLength(1);
  });
});

describe("what the embedded upkeep vacuums", () => {
  it("delivery every round; the tables rows are only added to on the first round and every tenth after", () => {
    expect(APPENDED_TABLES_EVERY).toBe(10);
    const all = ["status_event", "delivery", "delivery_attempt"];
    const rounds = Array.from({ length: 21 }, (_, i) => embeddedVacuumTables(i + 1));
    expect(rounds.map((tables, i) => (tables.length === 3 ? i + 1 : 0)).filter(Boolean)).toEqual([1, 11, 21]);
    expect(rounds[0]).toEqual(all);
    expect(rounds[10]).toEqual(all);
    for (const [i, tables] of rounds.entries()) if (![0, 10, 20].includes(i)) expect(tables).toEqual(["delivery"]);
  });
});
