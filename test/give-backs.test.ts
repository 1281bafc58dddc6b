import pino from "pino";
import type { ClaimedDelivery } from "../src/delivery/delivery.store";
import { GiveBacks } from "../src/delivery/give-backs";

const claimOf = (id: string): ClaimedDelivery => ({
  id,
  leaseToken: `t-${id}`,
  kind: "WEBHOOK",
  clientId: "c",
  callback: "http://a:80/cb",
  origin: "http://a:80",
  payload: "{}",
  attemptCount: 0,
  eventReceivedAt: new Date(),
});

function giveBacksOver(release: (claims: ClaimedDelivery[]) => Promise<unknown>) {
  const lines: Array<{ level: number; msg: string }> = [];
  const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  let released = 0;
  const giveBacks = new GiveBacks({ release, onReleased: () => released++, log });
  return { giveBacks, lines, released: () => released };
}

describe("give-backs", () => {
  it("releases what was collected in one call, and nothing when nothing was", async () => {
    const calls: string[][] = [];
    const { giveBacks, released } = giveBacksOver((claims) => {
      calls.push(claims.map((c) => c.id));
      return Promise.resolve();
    });
    giveBacks.flush();
    giveBacks.add(claimOf("a"));
    giveBacks.add(claimOf("b"));
    giveBacks.flush();
    giveBacks.flush();
    await giveBacks.settled();
    expect(calls).toEqual([["a", "b"]]);
    expect(released()).toBe(1);
  });

  it("logs a failed release (the leases run out instead) and does not report it released", async () => {
    const { giveBacks, lines, released } = giveBacksOver(() => Promise.reject(new Error("database unavailable")));
    giveBacks.add(claimOf("a"));
    giveBacks.flush();
    await giveBacks.settled();
    expect(released()).toBe(0);
    expect(lines).toEqual([
      expect.objectContaining({ level: 40, msg: expect.stringContaining("leases will run out") }),
    ]);
  });

  it("settles only when the releases under way have ended", async () => {
    let finish!: () => void;
    const { giveBacks, released } = giveBacksOver(() => new Promise<void>((resolve) => (finish = resolve)));
    giveBacks.add(claimOf("a"));
    giveBacks.flush();
    let settled = false;
    const waiting = giveBacks.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    finish();
    await waiting;
    expect([settled, released()]).toEqual([true, 1]);
  });
});
