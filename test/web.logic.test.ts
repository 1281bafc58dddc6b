/** The dashboard's own logic, without a browser: AWB checks before sending, and the merged timeline. */
import { judgeAwb } from "../web/dashboard/awb-input";
import { Timeline, type Milestone } from "../web/dashboard/timeline";

describe("judgeAwb (what the watch field says before anything is sent)", () => {
  const none = new Set<string>();
  test.each([
    ["020-12345675", "ok", "020-12345675"],
    ["02012345675", "ok", "020-12345675"],
    [" 020 12345675 ", "ok", "020-12345675"],
    ["020-12345678", "check-digit", "020-12345678"],
  ])("%s → %s", (text, kind, awb) => {
    expect(judgeAwb(text, none)).toMatchObject({ kind, awb });
  });
  test.each([
    ["020-1234567", /this has 10/],
    ["020-123456755", /this has 12/],
    ["O20-12345675", /only digits/],
    ["020/12345675", /only digits/],
  ])("%s is refused with a reason", (text, reason) => {
    const verdict = judgeAwb(text, none);
    expect(verdict.kind).toBe("invalid");
    expect(verdict.kind === "invalid" && verdict.message).toMatch(reason);
  });
  test("empty and already-watched numbers are neither errors nor new watches", () => {
    expect(judgeAwb("   ", none).kind).toBe("empty");
    expect(judgeAwb("02012345675", new Set(["020-12345675"]))).toEqual({ kind: "duplicate", awb: "020-12345675" });
  });
  test("the check-digit warning names the expected digit", () => {
    const verdict = judgeAwb("020-12345678", none);
    expect(verdict.kind === "check-digit" && verdict.message).toContain("should be 5");
  });
});

describe("Timeline (history and live merged)", () => {
  const milestone = (sequence: number, state: string, timestamp: string): Milestone => ({
    eventId: `e${sequence}`,
    sequence: String(sequence),
    awb: "020-12345675",
    state,
    timestamp,
    receivedAt: timestamp,
    toaTimestamp: null,
    station: null,
    flight: null,
  });

  test("repeats (a replay after reconnecting) are dropped; order is by when it happened, newest first", () => {
    const timeline = new Timeline("020-12345675");
    expect(timeline.lastSequence()).toBe("0");
    expect(
      timeline.add([milestone(1, "RCS", "2026-11-20T07:00:00.000Z"), milestone(3, "DEP", "2026-11-21T09:00:00.000Z")]),
    ).toBe(true);
    expect(timeline.add([milestone(3, "DEP", "2026-11-21T09:00:00.000Z")])).toBe(false);
    // Arrives later but happened in between (receivers order by timestamp, CONTRACT §7).
    expect(timeline.add([milestone(4, "MAN", "2026-11-21T06:00:00.000Z")])).toBe(true);
    expect(timeline.newestFirst().map((m) => m.state)).toEqual(["DEP", "MAN", "RCS"]);
    expect(timeline.lastSequence()).toBe("4");
    expect(timeline.size).toBe(3);
  });
});
