import { createCircuitBreakers, originAnswered } from "../src/delivery/circuit-breaker";

const A = "http://a:80";
const OPTIONS = { failures: 3, openMs: 1_000, maxOpenMs: 3_000 };

function breakersAt(options = OPTIONS) {
  const clock = { t: 0 };
  return { clock, breakers: createCircuitBreakers(options, () => clock.t) };
}

describe("what counts against an origin", () => {
  it.each([
    [null, false],
    [429, false],
    [500, false],
    [503, false],
    [200, true],
    [302, true],
    [404, true],
    [410, true],
  ])("status %p: answered %p", (status, answered) => {
    expect(originAnswered(status)).toBe(answered);
  });
});

describe("an origin's circuit", () => {
  it("opens after `failures` consecutive failures, for openMs; an answer in between starts the count afresh", () => {
    const { breakers } = breakersAt();
    expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.record(A, true)).toBeUndefined(); // closed: no change to report
    expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.record(A, false)).toEqual({ origin: A, change: "opened", forMs: 1_000 });
    expect([breakers.allows(A), breakers.isClosedTo(A), breakers.closedTo(), breakers.openCount()]).toEqual([
      false,
      true,
      [A],
      1,
    ]);
  });

  it("never opens with failures: 0", () => {
    const { breakers } = breakersAt({ ...OPTIONS, failures: 0 });
    for (let i = 0; i < 50; i++) expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.allows(A)).toBe(true);
  });

  it("lets exactly one probe through once its time is up", () => {
    const { breakers, clock } = breakersAt({ ...OPTIONS, failures: 1 });
    breakers.record(A, false);
    clock.t = 999;
    expect(breakers.allows(A)).toBe(false);
    clock.t = 1_000;
    expect(breakers.isClosedTo(A)).toBe(false); // due for its probe; asking changes nothing
    expect(breakers.allows(A)).toBe(true);
    expect([breakers.allows(A), breakers.isClosedTo(A), breakers.closedTo()]).toEqual([false, true, [A]]);
  });

  it("closes when its probe is answered; a failed probe opens it again for twice as long, up to maxOpenMs", () => {
    const { breakers, clock } = breakersAt({ ...OPTIONS, failures: 1 });
    breakers.record(A, false);
    const changes = [];
    for (const t of [1_000, 3_000, 7_000]) {
      clock.t = t;
      breakers.allows(A);
      changes.push(breakers.record(A, false));
    }
    expect(changes.map((c) => c?.forMs)).toEqual([2_000, 3_000, 3_000]);
    clock.t = 10_000;
    breakers.allows(A);
    expect(breakers.record(A, true)).toEqual({ origin: A, change: "closed" });
    expect([breakers.allows(A), breakers.openCount()]).toEqual([true, 0]);
  });

  it("lets the next send probe when the probe was abandoned unsent", () => {
    const { breakers, clock } = breakersAt({ ...OPTIONS, failures: 1 });
    breakers.record(A, false);
    clock.t = 1_000;
    expect(breakers.allows(A)).toBe(true);
    breakers.abandon(A);
    expect(breakers.allows(A)).toBe(true);
  });

  it("ignores the failure of a send that started before it opened", () => {
    const { breakers } = breakersAt({ ...OPTIONS, failures: 1 });
    breakers.record(A, false);
    expect(breakers.record(A, false)).toBeUndefined();
    expect(breakers.closedTo()).toEqual([A]);
  });

  it("forgets the least recently failed origin merely counting failures past 10,000 origins, never an open one", () => {
    const { breakers } = breakersAt({ ...OPTIONS, failures: 2 });
    breakers.record("http://open:80", false);
    breakers.record("http://open:80", false);
    breakers.record(A, false);
    for (let i = 0; i < 10_000; i++) breakers.record(`http://o${i}:80`, false);
    expect(breakers.record(A, false)).toBeUndefined(); // A's first failure was forgotten
    expect(breakers.closedTo()).toEqual(["http://open:80"]);
  });
});
