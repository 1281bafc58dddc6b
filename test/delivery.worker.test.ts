import { createDeliveryWorker, type WorkerDeps, type WorkerOptions } from "../src/delivery/delivery.worker";
import type { AttemptOutcome, ClaimedDelivery } from "../src/delivery/delivery.store";
import type { SendResult } from "../src/delivery/attempt-outcome";
import { silentLogger } from "./support/harness";
import { within } from "./support/webhooks";

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
  circuit: { failures: 0, openMs: 30_000, maxOpenMs: 600_000 }, // off unless a test turns it on
};

let serial = 0;
function delivery(origin = "http://a:80", attemptCount = 0): ClaimedDelivery {
  serial++;
  return {
    id: `d${serial}`,
    leaseToken: `t${serial}`,
    kind: "WEBHOOK",
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
    deferLimits: [] as number[],
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
    defer: (origin, _byMs, limit) => {
      seen.deferred.push(origin);
      seen.deferLimits.push(limit);
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

/**
 * A worker whose first claim filled origin a (perOrigin 2, its sends hanging) and whose second, woken
 * at once and excluding a, found nothing. Its clock is the test's; its own poll (a real 60 s) never
 * comes within a test, so only wake-ups and the fruitless claim's timer can start a claim.
 */
async function afterAFruitlessClaim() {
  let clock = 0;
  const hang = deferred<SendResult>();
  const excluded: string[][] = [];
  const busy = [delivery("http://a:80"), delivery("http://a:80")];
  const { worker } = harness({
    options: { ...OPTIONS, pollMs: 60_000 },
    now: () => clock,
    claim: ({ excludeOrigins }) => {
      excluded.push([...excludeOrigins]);
      return Promise.resolve(excluded.length === 1 ? busy : []);
    },
    send: () => hang.promise,
  });
  const release = async () => {
    hang.resolve(ok());
    await worker.stop();
  };
  try {
    worker.start();
    await until(() => excluded.length === 1, "the first claim");
    await new Promise((r) => setImmediate(r)); // its two sends started: origin a is full
    worker.wake();
    await until(() => excluded.length === 2, "the claim that excludes the full origin");
  } catch (error) {
    await release();
    throw error;
  }
  return { worker, excluded, setClock: (ms: number) => void (clock = ms), release };
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

  it("after a claim that excluded full origins found nothing, local commits do not repeat it before a poll interval; any-origin wakes do", async () => {
    const { worker, excluded, setClock, release } = await afterAFruitlessClaim();
    try {
      expect(excluded[1]).toEqual(["http://a:80"]);
      for (let i = 0; i < 5; i++) {
        worker.wakeAfterLocalCommit();
        await new Promise((r) => setImmediate(r));
      }
      expect(excluded).toHaveLength(2);
      worker.wake(); // committed elsewhere, requeued: may be for any origin
      await until(() => excluded.length === 3, "the claim on an any-origin wake");
      worker.wakeAfterLocalCommit();
      await new Promise((r) => setImmediate(r));
      expect(excluded).toHaveLength(3);
      setClock(60_000);
      worker.wakeAfterLocalCommit();
      await until(() => excluded.length === 4, "the claim after a poll interval");
      expect(excluded[3]).toEqual(["http://a:80"]);
    } finally {
      await release();
    }
  });

  it("repeats a fruitless claim once its poll interval has passed, with no wake-up after the one it skipped", async () => {
    const { worker, excluded, setClock, release } = await afterAFruitlessClaim();
    try {
      setClock(59_950);
      worker.wakeAfterLocalCommit(); // skipped: 50 ms of the interval are left
      await new Promise((r) => setImmediate(r));
      expect(excluded).toHaveLength(2);
      setClock(60_000);
      await until(() => excluded.length === 3, "the claim when the interval since the fruitless one ends");
    } finally {
      await release();
    }
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
    // A slow origin's backlog goes back 1,000 at a time: one statement of 10,000 ran past the watchdog.
    expect(new Set(seen.deferLimits)).toEqual(new Set([1_000]));
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
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise((r) => (timer = setTimeout(() => r("hung"), 2_000)));
    await expect(Promise.race([worker.stop().then(() => "stopped"), hung])).resolves.toBe("stopped");
    clearTimeout(timer);
    const d = delivery();
    batches.push([d]);
    worker.start();
    await until(() => seen.recorded.length === 1, "an outcome after the restart");
    await worker.stop();
    expect(seen.recorded.map((o) => o.deliveryId)).toEqual([d.id]);
  });

  it("stops with sends in flight: claims nothing more, waits for them, records their outcomes, then resolves", async () => {
    const answer = deferred<SendResult>();
    const handed = [delivery(), delivery()];
    const started: string[] = [];
    const { worker, seen } = harness({
      send: (d) => {
        started.push(d.id);
        return answer.promise;
      },
    });
    worker.start();
    worker.handoff.take(handed, performance.now());
    await until(() => started.length === 2, "both sends under way");
    const claims = seen.claims;
    let stopped = false;
    const stopping = worker.stop().then(() => (stopped = true));
    // Its claim loop stopped and nothing to give back, the stop has only the two sends left to wait for.
    for (let turn = 0; turn < 20; turn++) await new Promise((r) => setImmediate(r));
    expect({ stopped, recorded: seen.recorded.length }).toEqual({ stopped: false, recorded: 0 });
    expect(worker.handoff.room("http://a:80")).toBe(0);
    answer.resolve(ok());
    await within("the stop", 5_000, stopping);
    expect(stopped).toBe(true);
    expect(seen.recorded.map((o) => o.deliveryId).sort()).toEqual(handed.map((d) => d.id).sort());
    expect(seen.released).toEqual([]);
    expect(seen.claims).toBe(claims);
  });

  it("gives back what is handed off beyond its room (ingestions racing for it), and sends the rest", async () => {
    const answer = deferred<SendResult>();
    const started: string[] = [];
    const { worker, seen } = harness({
      send: (d) => {
        started.push(d.id);
        return answer.promise;
      },
    });
    worker.start();
    // Room is not reserved: two ingestions asked at once, each was told 2, and both handed 2 over.
    expect(worker.handoff.room("http://a:80")).toBe(OPTIONS.perOrigin);
    const first = [delivery(), delivery()];
    const second = [delivery(), delivery()];
    worker.handoff.take(first, performance.now());
    worker.handoff.take(second, performance.now());
    await until(() => seen.released.length === 2, "the surplus given back");
    expect(started.sort()).toEqual(first.map((d) => d.id).sort());
    expect(seen.released.sort()).toEqual(second.map((d) => d.id).sort());
    expect(worker.handoff.room("http://a:80")).toBe(0);
    answer.resolve(ok());
    await worker.stop();
    expect(seen.recorded.map((o) => o.deliveryId).sort()).toEqual(first.map((d) => d.id).sort());
  });

  it("takes deliveries handed off by an ingestion in this process without a claim, and has no room while stopped", async () => {
    const { worker, seen } = harness(); // its claims find nothing: whatever is sent came by hand-off
    expect(worker.handoff.room("http://a:80")).toBe(0);
    worker.start();
    // An origin not yet timed may hold its concurrency (perOrigin: 2), not a fast origin's prefetch.
    expect(worker.handoff.room("http://a:80")).toBe(OPTIONS.perOrigin);
    const handed = [delivery(), delivery()];
    worker.handoff.take(handed, performance.now());
    await until(() => seen.recorded.length === 2, "both handed-off deliveries recorded");
    expect(seen.sent.sort()).toEqual(handed.map((d) => d.id).sort());
    await worker.stop();
    expect(worker.handoff.room("http://a:80")).toBe(0);
  });

  describe("per-origin circuit breakers", () => {
    const failing = (statusCode = 503): SendResult => ({ ...ok(statusCode), statusCode });
    const circuit = { failures: 3, openMs: 1_000, maxOpenMs: 3_000 };

    it("stops sending to an origin after consecutive failures, claims around it, and pushes its backlog back; other origins go on", async () => {
      // A store in miniature: what is not delivered stays claimable (a failed send's retry is due at once).
      const pending = new Map<string, ClaimedDelivery>();
      const leased = new Set<string>();
      for (const d of [
        ...Array.from({ length: 6 }, () => delivery("http://bad:80")),
        ...Array.from({ length: 3 }, () => delivery("http://good:80")),
      ])
        pending.set(d.id, d);
      const excluded: string[][] = [];
      const { worker, seen } = harness({
        // One send at a time to an origin, so the fourth is decided after the third has failed. The
        // clock is real (claims that find nothing are repeated once per poll, pollMs of it) and the
        // circuit stays open far longer than the test.
        options: { ...OPTIONS, perOrigin: 1, circuit: { ...circuit, openMs: 600_000, maxOpenMs: 600_000 } },
        claim: (args) => {
          excluded.push(args.excludeOrigins);
          const out = [...pending.values()]
            .filter((d) => !leased.has(d.id) && !args.excludeOrigins.includes(d.origin))
            .slice(0, args.limit);
          for (const d of out) leased.add(d.id);
          return Promise.resolve(out);
        },
        release: (claims) => {
          for (const c of claims) leased.delete(c.id);
          return Promise.resolve();
        },
        record: (outcomes) => {
          for (const o of outcomes) {
            leased.delete(o.deliveryId);
            if (o.status !== "PENDING") pending.delete(o.deliveryId);
          }
          seen.recorded.push(...outcomes);
          return Promise.resolve(outcomes.length);
        },
        send: (d) => {
          seen.sent.push(d.origin);
          return Promise.resolve(d.origin === "http://bad:80" ? failing() : ok());
        },
      });
      worker.start();
      await until(
        () => [...pending.values()].every((d) => d.origin === "http://bad:80"),
        "the good origin's deliveries",
      );
      await until(() => excluded.length > 5 && excluded.at(-1)!.includes("http://bad:80"), "claims leaving it out");
      await worker.stop();
      // Three failures opened it: no fourth send, whatever was due; the good origin got all three.
      expect(seen.sent.filter((o) => o === "http://bad:80")).toHaveLength(3);
      expect(seen.sent.filter((o) => o === "http://good:80")).toHaveLength(3);
      expect(seen.deferred).toEqual(["http://bad:80"]);
      expect(seen.deferLimits).toEqual([10_000]); // once per opening: its whole due backlog, up to 10,000
      expect(pending.size).toBe(6);
    });

    it("lets one probe through once the time is up: a success closes it, a failure opens it again for twice as long", async () => {
      const clock = { t: 0 };
      let answer = failing();
      const changes: Array<[string, number | undefined]> = [];
      const queue: ClaimedDelivery[][] = [];
      const { worker, seen } = harness({
        options: { ...OPTIONS, circuit: { ...circuit, failures: 2 } },
        now: () => clock.t,
        claim: () => Promise.resolve(queue.shift() ?? []),
        send: (d) => {
          seen.sent.push(d.id);
          return Promise.resolve(answer);
        },
        onCircuit: (change) => changes.push([change.change, change.forMs]),
      });
      worker.start();
      queue.push(Array.from({ length: 2 }, () => delivery("http://bad:80")));
      worker.wake();
      await until(() => changes.length === 1, "the circuit opening");
      expect(changes).toEqual([["opened", 1_000]]);

      // Still open: a handed-off delivery finds no room, and one claimed is given back unsent.
      expect(worker.handoff.room("http://bad:80")).toBe(0);
      const early = delivery("http://bad:80");
      worker.handoff.take([early], clock.t);
      await until(() => seen.released.includes(early.id), "the early one given back");
      expect(seen.sent).not.toContain(early.id);

      // Time is up: of two, one probe goes; it fails: open again, for 2 s.
      clock.t = 1_000;
      const [probe, other] = [delivery("http://bad:80"), delivery("http://bad:80")];
      worker.handoff.take([probe, other], clock.t);
      await until(() => changes.length === 2, "the failed probe");
      expect(changes[1]).toEqual(["opened", 2_000]);
      expect(seen.sent.filter((id) => id === probe.id || id === other.id)).toEqual([probe.id]);

      // Up again: a probe that succeeds closes it, and the origin takes sends again.
      clock.t = 3_000;
      answer = ok();
      const [second, after] = [delivery("http://bad:80"), delivery("http://bad:80")];
      worker.handoff.take([second], clock.t);
      await until(() => changes.length === 3, "the successful probe");
      expect(changes[2]).toEqual(["closed", undefined]);
      worker.handoff.take([after], clock.t);
      await until(() => seen.sent.includes(after.id), "a send after it closed");
      await worker.stop();
    });

    /** A delivery to one path of an origin. */
    const toPath = (origin: string, path: string): ClaimedDelivery => ({
      ...delivery(origin),
      callback: origin + path,
    });
    /**
     * Claims served from a queue in order: what is given back is claimable again, first; what is
     * recorded is done (a retry is not claimed again here).
     */
    function queueOf(deliveries: ClaimedDelivery[]): Pick<WorkerDeps, "claim" | "release"> & { given: string[] } {
      const waiting = [...deliveries];
      const given: string[] = [];
      return {
        given,
        claim: ({ limit, excludeOrigins }) => {
          const out = waiting.filter((d) => !excludeOrigins.includes(d.origin)).slice(0, limit);
          for (const d of out) waiting.splice(waiting.indexOf(d), 1);
          return Promise.resolve(out);
        },
        release: (claims) => {
          given.push(...claims.map((c) => c.id));
          waiting.unshift(...claims);
          return Promise.resolve();
        },
      };
    }

    it("does not count a 404 or 410 of one callback path against the origin: the circuit stays closed, another path on it keeps receiving", async () => {
      const shared = "http://shared:80";
      const wrong = [...Array.from({ length: 4 }, () => toPath(shared, "/missing")), toPath(shared, "/gone")];
      const right = toPath(shared, "/right");
      const changes: string[] = [];
      const { worker, seen } = harness({
        // One at a time, in claim order: every wrong-path answer is known before the right path's send.
        options: { ...OPTIONS, perOrigin: 1, circuit },
        now: () => 0,
        ...queueOf([...wrong, right]),
        send: (d) => {
          seen.sent.push(d.id);
          const status = d.callback.endsWith("/missing") ? 404 : d.callback.endsWith("/gone") ? 410 : 204;
          return Promise.resolve(status === 204 ? ok() : failing(status));
        },
        onCircuit: (change) => changes.push(change.change),
      });
      worker.start();
      await until(() => seen.recorded.length === 6, "every outcome");
      await worker.stop();
      expect(changes).toEqual([]);
      expect(seen.sent).toEqual([...wrong, right].map((d) => d.id));
      expect(seen.deferred).toEqual([]);
      // Each is still a failed attempt of its own delivery: retried (404) or dead (410).
      expect(seen.recorded.map((o) => o.status)).toEqual([
        "PENDING",
        "PENDING",
        "PENDING",
        "PENDING",
        "DEAD",
        "DELIVERED",
      ]);
    });

    it.each([
      ["503", failing(503)],
      ["429", failing(429)],
      ["no answer", { ...ok(), statusCode: null, error: "ECONNREFUSED" }],
    ])("counts %s against the origin: the circuit opens", async (_what, answer: SendResult) => {
      const changes: string[] = [];
      const { worker, seen } = harness({
        options: { ...OPTIONS, perOrigin: 1, circuit },
        now: () => 0,
        ...queueOf(Array.from({ length: 4 }, () => toPath("http://busy:80", "/cb"))),
        send: (d) => {
          seen.sent.push(d.id);
          return Promise.resolve(answer);
        },
        onCircuit: (change) => changes.push(change.change),
      });
      worker.start();
      await until(() => changes.length === 1, "the circuit opening");
      await worker.stop();
      expect(changes).toEqual(["opened"]);
      expect(seen.sent).toHaveLength(3);
    });

    it("closes an open circuit when its probe is answered 404: the origin answers, its path is the subscription's problem", async () => {
      const clock = { t: 0 };
      const changes: string[] = [];
      const { worker, seen } = harness({
        options: { ...OPTIONS, circuit: { ...circuit, failures: 1 } },
        now: () => clock.t,
        claim: () => Promise.resolve([]),
        send: (d) => {
          seen.sent.push(d.id);
          return Promise.resolve(failing(d.callback.endsWith("/missing") ? 404 : 503));
        },
        onCircuit: (change) => changes.push(change.change),
      });
      worker.start();
      worker.handoff.take([toPath("http://flaky:80", "/cb")], clock.t);
      await until(() => changes.length === 1, "the circuit opening");
      clock.t = 1_000;
      worker.handoff.take([toPath("http://flaky:80", "/missing")], clock.t);
      await until(() => changes.length === 2, "the probe's answer");
      await worker.stop();
      expect(changes).toEqual(["opened", "closed"]);
    });

    it("lets the next delivery probe when the probe was given back unsent (its secret came too late)", async () => {
      const clock = { t: 0 };
      let declined = false;
      const changes: string[] = [];
      const { worker, seen } = harness({
        options: { ...OPTIONS, circuit: { ...circuit, failures: 1 } },
        now: () => clock.t,
        claim: () => Promise.resolve([]),
        send: (d) => {
          if (declined) return Promise.resolve(null); // as the runtime does when the secret is late
          seen.sent.push(d.id);
          return Promise.resolve(d.id.startsWith("d") && changes.length === 0 ? failing() : ok());
        },
        onCircuit: (change) => changes.push(change.change),
      });
      worker.start();
      worker.handoff.take([delivery("http://bad:80")], clock.t);
      await until(() => changes.length === 1, "the circuit opening");
      clock.t = 1_000;
      declined = true;
      const probe = delivery("http://bad:80");
      worker.handoff.take([probe], clock.t);
      await until(() => seen.released.includes(probe.id), "the probe given back");
      // Not stuck half-open: the origin takes a delivery again, and its probe closes the circuit.
      declined = false;
      // Timed fast (1 ms), it may hold 32 × perOrigin; the worker's spare claims bound that: 4 × concurrency.
      expect(worker.handoff.room("http://bad:80")).toBe(4 * OPTIONS.concurrency);
      const next = delivery("http://bad:80");
      worker.handoff.take([next], clock.t);
      await until(() => changes.length === 2, "the next probe closing it");
      await worker.stop();
      expect(changes).toEqual(["opened", "closed"]);
      expect(seen.sent).toContain(next.id);
    });
  });
});
