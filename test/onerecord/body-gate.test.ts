import { setImmediate as nextTurn } from "node:timers/promises";
import { createBodyGate } from "../../src/onerecord/body-gate";

/** The ONE Record body gate (src/onerecord/body-gate.ts): a few requests at a time, handed over a turn later. */
describe("body gate", () => {
  it("lets in as many as it has places, the next in line when one leaves, in order", async () => {
    const gate = createBodyGate(2);
    const order: number[] = [];
    const places = Array.from({ length: 5 }, (_, i) => {
      const place = gate.join();
      void place.turn.then((entered) => entered && order.push(i));
      return place;
    });
    await nextTurn();
    expect(order).toEqual([0, 1]);
    places[1]!.leave();
    places[0]!.leave();
    await nextTurn();
    await nextTurn();
    expect(order).toEqual([0, 1, 2, 3]);
    places[2]!.leave();
    await nextTurn();
    await nextTurn();
    expect(order).toEqual([0, 1, 2, 3, 4]);
  });

  it("lets the next in only on a later turn of the event loop, never within the turn that freed the place", async () => {
    const gate = createBodyGate(1);
    const first = gate.join();
    const second = gate.join();
    const seen: string[] = [];
    void second.turn.then(() => seen.push("second in"));
    setImmediate(() => seen.push("queued for the next turn"));
    first.leave();
    // A promise resolved on leaving would already have let it in here.
    await Promise.resolve();
    await Promise.resolve();
    expect(seen).toEqual([]);
    await nextTurn();
    await nextTurn();
    expect(seen).toEqual(["queued for the next turn", "second in"]);
  });

  it("gives a place back once however often it is left, and passes on the place of one who left the line", async () => {
    const gate = createBodyGate(1);
    const first = gate.join();
    const gone = gate.join();
    const third = gate.join();
    const entered: string[] = [];
    void gone.turn.then((inside) => entered.push(`gone ${inside}`));
    void third.turn.then((inside) => entered.push(`third ${inside}`));
    gone.leave();
    await nextTurn();
    expect(entered).toEqual(["gone false"]);
    first.leave();
    first.leave();
    await nextTurn();
    await nextTurn();
    expect(entered).toEqual(["gone false", "third true"]);
    // One place: a fourth waits for the third.
    let fourthIn = false;
    void gate.join().turn.then(() => (fourthIn = true));
    await nextTurn();
    expect(fourthIn).toBe(false);
  });

  it("passes the place on when the one it was handed to left before its turn came", async () => {
    const gate = createBodyGate(1);
    const first = gate.join();
    const second = gate.join();
    const third = gate.join();
    first.leave();
    // The place is on its way to the second, which leaves before it arrives.
    second.leave();
    expect(await second.turn).toBe(false);
    expect(await third.turn).toBe(true);
  });
});
