import { createDeliveryWorker, type WorkerDeps, type WorkerOptions } from "../src/delivery/delivery.worker";
import type { AttemptOutcome, ClaimedDelivery } from "../src/delivery/delivery.store";
import type { SendResult } from "../src/delivery/sender";
import { silentLogger } from "./support/harness";

/**
 * The worker's policy with its I/O injected (graphile-worker's shape): what it claims, sends, gives
 * back and records is observed directly. The store's SQL is tested on its own (delivery.store.test.ts).
 */

const OPTIONS: WorkerOptions = {
  concurrency: 4,
  perOrigin: 2,
  pollMs: 20,
  leaseMs: 30_000,
  sendBudgetMs: 12_000,
  retrySchedule: [1_000, 2_000],
};

let serial = 0;
function delivery(origin = "http://a:80", attemptCount = 0): ClaimedDelivery {
  serial++;
  return {
    id: `d${serial}`,
    leaseToken: `t${serial}`,
    clientId: "c",
    callback: `${origin}/cb`,
    origin,
    payload: "{}",
    attemptCount,
    eventReceivedAt: new Date(),
  };
}
const ok = (statusCode = 204): SendResult => ({
  startedAt: new Date(),
  durationMs: 1,
  statusCode,
  error: null,
  retryAfterMs: null,
});

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A worker over scripted claims; everything it does is recorded. */
function harness(overrides: Partial<WorkerDeps> & { batches?: ClaimedDelivery[][] } = {}) {
  const batches = overrides.batches ?? [];
  const seen = {
    claims: 0,
    sent: [] as string[],
    released: [] as string[],
    recorded: [] as AttemptOutcome[],
    deferred: [] as string[],
  };
  const deps: WorkerDeps = {
    claim: () => {
      seen.claims++;
      return Promise.resolve(batches.shift() ?? []);
    },
    release: (claims) => {
      seen.released.push(...claims.map((c) => c.id));
      return Promise.resolve();
    },
    defer: (origin) => {
      seen.deferred.push(origin);
      return Promise.resolve(0);
    },
    send: (d) => {
      seen.sent.push(d.id);
      return Promise.resolve(ok());
    },
    record: (outcomes) => {
      seen.recorded.push(...outcomes);
      return Promise.resolve(outcomes.length);
    },
    log: silentLogger,
    options: OPTIONS,
    ...overrides,
  };
  return { worker: createDeliveryWorker(deps), seen };
}

async function until(predicate: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !predicate(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!predicate()) throw new Error(`timed out waiting for ${what}`);
}

describe("the delivery worker's policy", () => {
  it("sends what it claims and records each outcome with the claim's lease token", async () => {
    const batch = [delivery(), delivery()];
    const { worker, seen } = harness({ batches: [batch] });
    worker.start();
    await until(() => seen.recorded.length === 2, "two outcomes");
    await worker.stop();
    expect(seen.sent.sort()).toEqual(batch.map((d) => d.id).sort());
    expect(seen.recorded.map((o) => [o.deliveryId, o.leaseToken, o.status]).sort()).toEqual(
      batch.map((d) => [d.id, d.leaseToken, "DELIVERED"]).sort(),
    );
  });

  it("gives back, unsent, a claimed delivery that can no longer start with its send budget left in the lease", async () => {
    let clock = 0;
    const gate = deferred();
    const first = delivery();
    const second = delivery(); // same origin, perOrigin 1 below: it waits in the queue behind `first`
    const { worker, seen } = harness({
      batches: [[first, second]],
      options: { ...OPTIONS, perOrigin: 1 },
      now: () => clock,
      send: async (d) => {
        seen.sent.push(d.id);
        if (d.id === first.id) await gate.promise;
        return ok();
      },
    });
    worker.start();
    await until(() => seen.sent.length === 1, "the first send");
    clock = OPTIONS.leaseMs - OPTIONS.sendBudgetMs + 1; // past the last moment `second` could start
    gate.resolve();
    await until(() => seen.released.length === 1, "the give-back");
    await worker.stop();
    expect(seen.sent).toEqual([first.id]);
    expect(seen.released).toEqual([second.id]);
  });

  it("gives back a delivery whose send declined to start (its secret came too late)", async () => {
    const late = delivery();
    const { worker, seen } = harness({ batches: [[late]], send: () => Promise.resolve(null) });
    worker.start();
    await until(() => seen.released.length === 1, "the give-back");
    await worker.stop();
    expect(seen.released).toEqual([late.id]);
    expect(seen.recorded).toEqual([]);
  });

  it("defers the due backlog of an origin seen to be slow whose every slot is busy, so claims for other origins stay cheap", async () => {
    const gate = deferred();
    const slow = "http://slow:80";
    const fast = "http://fast:80";
    let slowSends = 0;
    const { worker, seen } = harness({
      // First a quick round that teaches the worker each origin's pace, then the slow origin's slots fill.
      batches: [
        [delivery(slow), delivery(fast), delivery(fast)],
        [delivery(slow), delivery(slow), delivery(fast), delivery(fast)],
        [],
        [],
        [],
      ],
      send: async (d) => {
        seen.sent.push(d.id);
        if (d.origin === slow && ++slowSends > 1) await gate.promise;
        return { ...ok(), durationMs: d.origin === slow ? 2_000 : 1 };
      },
    });
    worker.start();
    await until(() => seen.sent.length === 3, "the first round");
    worker.wake();
    await until(() => slowSends === 3, "both slots of the slow origin busy");
    worker.wake();
    await until(() => seen.deferred.length > 0, "a deferral");
    gate.resolve();
    await worker.stop();
    expect(new Set(seen.deferred)).toEqual(new Set([slow]));
  });

  it("retries a failed recording until it succeeds, and records each outcome once", async () => {
    let failuresLeft = 2;
    const attempts: number[] = [];
    const d = delivery();
    const { worker, seen } = harness({
      batches: [[d]],
      record: (outcomes) => {
        attempts.push(outcomes.length);
        if (failuresLeft-- > 0) return Promise.reject(new Error("database unavailable"));
        seen.recorded.push(...outcomes);
        return Promise.resolve(outcomes.length);
      },
    });
    worker.start();
    await until(() => seen.recorded.length === 1, "the outcome recorded");
    await worker.stop();
    expect(attempts).toEqual([1, 1, 1]);
    expect(seen.recorded.map((o) => o.deliveryId)).toEqual([d.id]);
  });

  it("can be stopped twice, and started again after a stop with nothing to record, and still records", async () => {
    expect.assertions(2);
    const batches: ClaimedDelivery[][] = [];
    const { worker, seen } = harness({ batches });
    worker.start();
    await worker.stop();
    // A second stop must settle (it once waited forever on a recording that had already finished).
    await expect(
      Promise.race([worker.stop().then(() => "stopped"), new Promise((r) => setTimeout(() => r("hung"), 2_000))]),
    ).resolves.toBe("stopped");
    const d = delivery();
    batches.push([d]);
    worker.start();
    await until(() => seen.recorded.length === 1, "an outcome after the restart");
    await worker.stop();
    expect(seen.recorded.map((o) => o.deliveryId)).toEqual([d.id]);
  });

  it("takes deliveries handed off by an ingestion in this process without a claim, and has no room while stopped", async () => {
    const { worker, seen } = harness(); // its claims find nothing: whatever is sent came by hand-off
    expect(worker.handoff.room("http://a:80")).toBe(0);
    worker.start();
    const room = worker.handoff.room("http://a:80");
    expect(room).toBeGreaterThan(0);
    const handed = [delivery(), delivery()];
    worker.handoff.take(handed, performance.now());
    await until(() => seen.recorded.length === 2, "both handed-off deliveries recorded");
    expect(seen.sent.sort()).toEqual(handed.map((d) => d.id).sort());
    await worker.stop();
    expect(worker.handoff.room("http://a:80")).toBe(0);
  });
});
