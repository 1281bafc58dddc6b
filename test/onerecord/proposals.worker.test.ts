import { ConfigError, loadConfig } from "../../src/config";
import type { ProposalAnswer, ProposalQuestion } from "../../src/onerecord/proposals/partner-client";
import type { ClaimedProposal } from "../../src/onerecord/proposals/proposals.store";
import {
  doublingDelay,
  type ProposalWorkerOptions,
  startProposalWorker,
} from "../../src/onerecord/proposals/proposals.worker";

const quiet = { info: () => {}, warn: () => {} };

const proposal = (id: string, attemptCount = 0): ClaimedProposal => ({
  id,
  partner: "organization-p",
  topicType: "LOGISTICS_OBJECT_IDENTIFIER",
  topic: `shipment-${id}`,
  attemptCount,
  lease: new Date(),
  serverUrl: "http://partner.test",
  clientId: null,
});

const subscription = {
  node: {},
  eventTypes: ["LOGISTICS_EVENT_RECEIVED"],
  expiresAt: null,
  sendBody: false,
  notifyStatusChange: false,
};

/** A worker over in-memory I/O: `due` is claimed in batches, `answers` says what each topic's partner answers. */
function harness(
  due: ClaimedProposal[],
  answers: Record<string, ProposalAnswer>,
  overrides: Partial<ProposalWorkerOptions> = {},
) {
  const written: Array<{ id: string; write: string; detail: unknown }> = [];
  const asked: ProposalQuestion[] = [];
  const outcomes: string[] = [];
  let fills = 0;
  const queue = [...due];
  const worker = startProposalWorker({
    intervalMs: 0,
    batchSize: 2,
    leaseMs: 60_000,
    retryDelayMs: doublingDelay(1_000, 8_000),
    fill: async () => {
      fills++;
      return 0;
    },
    claim: async (limit) => queue.splice(0, limit),
    ask: async (question) => {
      asked.push(question);
      return answers[question.topic]!;
    },
    answered: async (p, subscriptions) => {
      written.push({ id: p.id, write: "answered", detail: subscriptions.length });
      return subscriptions.map((_, i) => `${p.id}-${i}`);
    },
    unanswered: async (p, outcome) => {
      written.push({ id: p.id, write: "unanswered", detail: outcome });
      return true;
    },
    questionOf: (p) => ({ serverUrl: p.serverUrl, topic: p.topic, partnerUri: p.partner }),
    onOutcome: (outcome) => outcomes.push(outcome),
    log: quiet,
    ...overrides,
  });
  return { worker, written, asked, outcomes, fills: () => fills };
}

describe("the proposal loop", () => {
  it("fills the to-do, then asks every due proposal batch by batch, and records each answer by its kind", async () => {
    const { worker, written, asked, outcomes, fills } = harness(
      [proposal("a"), proposal("b"), proposal("c", 2), proposal("d"), proposal("e")],
      {
        "shipment-a": { kind: "subscribed", subscriptions: [subscription, subscription], refused: [] },
        "shipment-b": { kind: "declined", reason: "422" },
        "shipment-c": { kind: "unavailable", reason: "HTTP 503" },
        "shipment-d": { kind: "refused", reason: "HTTP 403" },
        "shipment-e": { kind: "unavailable", reason: "HTTP 429", retryAfterMs: 120_000 },
      },
    );
    expect(await worker.runOnce()).toEqual({ subscribed: 1, declined: 1, failed: 1, retry: 2, lost: 0 });
    expect(fills()).toBe(1);
    expect(asked.map((q) => q.topic)).toEqual(["shipment-a", "shipment-b", "shipment-c", "shipment-d", "shipment-e"]);
    expect(written).toEqual([
      { id: "a", write: "answered", detail: 2 },
      { id: "b", write: "answered", detail: 0 },
      // Its third unanswered attempt: 1 s doubled twice.
      { id: "c", write: "unanswered", detail: { status: "PENDING", delayMs: 4_000, error: "HTTP 503" } },
      { id: "d", write: "unanswered", detail: { status: "FAILED", delayMs: 0, error: "HTTP 403" } },
      // Retry-After, when longer than the backoff, is honoured.
      { id: "e", write: "unanswered", detail: { status: "PENDING", delayMs: 120_000, error: "HTTP 429" } },
    ]);
    expect(outcomes.sort()).toEqual(["declined", "failed", "retry", "retry", "subscribed"]);
    await worker.stop();
  });

  it("a write that finds the lease taken over counts as lost; a write that fails does not stop the others", async () => {
    const { worker, outcomes } = harness(
      [proposal("a"), proposal("b"), proposal("c")],
      {
        "shipment-a": { kind: "subscribed", subscriptions: [subscription], refused: [] },
        "shipment-b": { kind: "unavailable", reason: "ECONNREFUSED" },
        "shipment-c": { kind: "declined", reason: "none" },
      },
      {
        answered: async (p) => {
          if (p.id === "c") throw new Error("database down");
          return undefined;
        },
        unanswered: async () => false,
      },
    );
    expect(await worker.runOnce()).toEqual({ subscribed: 0, declined: 0, failed: 0, retry: 0, lost: 3 });
    expect(outcomes).toEqual(["lost", "lost", "lost"]);
    await worker.stop();
  });

  it("the backoff doubles from its base up to its maximum", () => {
    const delay = doublingDelay(30_000, 3_600_000);
    expect([1, 2, 3, 8, 9, 100].map(delay)).toEqual([30_000, 60_000, 120_000, 3_600_000, 3_600_000, 3_600_000]);
  });

  it("stop waits for the batch in flight and asks no further batch", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const claimed: string[] = [];
    const queue = [proposal("a"), proposal("b"), proposal("c"), proposal("d")];
    const { worker, written } = harness(
      [],
      {},
      {
        claim: async (limit) => {
          const batch = queue.splice(0, limit);
          claimed.push(...batch.map((p) => p.id));
          return batch;
        },
        ask: async () => {
          await held;
          return { kind: "declined", reason: "none" };
        },
      },
    );
    const run = worker.runOnce();
    await new Promise((resolve) => setImmediate(resolve));
    const stopped = worker.stop();
    release();
    await Promise.all([run, stopped]);
    expect(claimed).toEqual(["a", "b"]);
    expect(written.map((w) => w.id)).toEqual(["a", "b"]);
  });

  it("runs every interval by itself until stopped, and a failed run does not stop it", async () => {
    let runs = 0;
    let resolveThird!: () => void;
    const third = new Promise<void>((resolve) => (resolveThird = resolve));
    const { worker } = harness(
      [],
      {},
      {
        intervalMs: 5,
        fill: async () => {
          runs++;
          if (runs === 3) resolveThird();
          if (runs === 1) throw new Error("database down");
          return 0;
        },
      },
    );
    await third;
    await worker.stop();
    const after = runs;
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(runs).toBe(after);
  });
});

describe("ONE_RECORD_PROPOSAL_INTERVAL_MS", () => {
  const interval = (value?: string) =>
    loadConfig(value === undefined ? {} : { ONE_RECORD_PROPOSAL_INTERVAL_MS: value }).oneRecord.proposalIntervalMs;

  it("is 10 s unless set; 0 (no timer on the instance) and 100 ms to an hour are taken", () => {
    expect(interval()).toBe(10_000);
    expect(interval("250")).toBe(250);
    expect(interval("0")).toBe(0);
    expect(interval("3600000")).toBe(3_600_000);
  });

  it.each(["50", "99", "3600001", "1.5", "-1", "soon"])("refuses %s, naming the setting", (value) => {
    expect(() => interval(value)).toThrow(ConfigError);
    expect(() => interval(value)).toThrow(/ONE_RECORD_PROPOSAL_INTERVAL_MS/);
  });
});
