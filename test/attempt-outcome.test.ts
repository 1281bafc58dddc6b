import { decideOutcome, type SendResult } from "../src/delivery/attempt-outcome";
import { MAX_RETRY_AFTER_MS } from "../src/delivery/backoff";
import type { ClaimedDelivery } from "../src/delivery/delivery.store";

const SCHEDULE = [1_000, 60_000];
const NOW = Date.parse("2025-01-01T00:00:00Z");
/** Jitter's midpoint: the schedule's wait exactly. */
const noJitter = () => 0.5;

const delivery = (attemptCount = 0, kind: ClaimedDelivery["kind"] = "WEBHOOK"): ClaimedDelivery => ({
  id: "d1",
  leaseToken: "t1",
  kind,
  clientId: "c",
  callback: "http://a:80/cb",
  origin: "http://a:80",
  payload: "{}",
  attemptCount,
  eventReceivedAt: new Date(NOW - 5_000),
});
const answered = (statusCode: number | null, retryAfterMs: number | null = null): SendResult => ({
  startedAt: new Date(NOW - 30),
  durationMs: 30,
  statusCode,
  error: statusCode !== null && statusCode < 300 ? null : `HTTP ${statusCode}`,
  retryAfterMs,
});
const decide = (attemptCount: number, result: SendResult) =>
  decideOutcome(delivery(attemptCount), result, SCHEDULE, NOW, noJitter);

describe("an attempt's outcome", () => {
  it("carries the attempt's lease token and what the send saw", () => {
    const result = answered(503);
    expect(decide(0, result).outcome).toMatchObject({
      deliveryId: "d1",
      leaseToken: "t1",
      startedAt: result.startedAt,
      durationMs: 30,
      statusCode: 503,
      error: "HTTP 503",
    });
  });

  it.each([200, 204, 299])("is delivered on %i, even on the last attempt", (status) => {
    expect(decide(SCHEDULE.length, answered(status))).toEqual({
      outcome: expect.objectContaining({ status: "DELIVERED", nextAttemptAt: null }),
      kind: "delivered",
    });
  });

  it("is dead at once on 410 (gone), whatever retries are left", () => {
    expect(decide(0, answered(410))).toEqual({
      outcome: expect.objectContaining({ status: "DEAD", nextAttemptAt: null }),
      kind: "gone",
    });
  });

  it.each([
    ["a 5xx", 503],
    ["a 404", 404],
    ["a 3xx", 302],
    ["no answer", null],
  ])("after %s, is retried at the schedule's wait for that retry", (_what, status) => {
    expect(decide(0, answered(status))).toEqual({
      outcome: expect.objectContaining({ status: "PENDING", nextAttemptAt: new Date(NOW + 1_000) }),
      kind: "retry",
    });
    expect(decide(1, answered(status)).outcome.nextAttemptAt).toEqual(new Date(NOW + 60_000));
  });

  it("is dead once the schedule has no retry left", () => {
    expect(decide(SCHEDULE.length, answered(503))).toEqual({
      outcome: expect.objectContaining({ status: "DEAD", nextAttemptAt: null }),
      kind: "dead",
    });
  });

  it("keeps a ONE Record notification past the schedule, retried at its last wait; 410 still ends it", () => {
    const oneRecord = (attemptCount: number, result: SendResult) =>
      decideOutcome(delivery(attemptCount, "ONE_RECORD"), result, SCHEDULE, NOW, noJitter);
    for (const attemptCount of [SCHEDULE.length, SCHEDULE.length + 1, 50])
      expect(oneRecord(attemptCount, answered(503))).toEqual({
        outcome: expect.objectContaining({ status: "PENDING", nextAttemptAt: new Date(NOW + 60_000) }),
        kind: "retry",
      });
    expect(oneRecord(0, answered(503)).outcome.nextAttemptAt).toEqual(new Date(NOW + 1_000));
    expect(oneRecord(SCHEDULE.length, answered(410))).toEqual({
      outcome: expect.objectContaining({ status: "DEAD", nextAttemptAt: null }),
      kind: "gone",
    });
    expect(oneRecord(SCHEDULE.length, answered(204)).outcome.status).toBe("DELIVERED");
  });

  it("waits at least the receiver's Retry-After, up to its cap", () => {
    expect(decide(0, answered(429, 30_000)).outcome.nextAttemptAt).toEqual(new Date(NOW + 30_000));
    expect(decide(0, answered(429, 10 * MAX_RETRY_AFTER_MS)).outcome.nextAttemptAt).toEqual(
      new Date(NOW + MAX_RETRY_AFTER_MS),
    );
  });
});
