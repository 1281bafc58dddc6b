import pino from "pino";
import { type KeyVerdict, startKeyRecheck } from "../src/live/key-recheck";

const REVOKED: KeyVerdict = { ok: false, code: 4401, reason: "The API key was revoked" };

/** A real logger whose lines are kept, parsed. */
function capturedLog() {
  const lines: Array<Record<string, unknown>> = [];
  const log = pino({ level: "debug" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { log, lines };
}

describe("the periodic key re-check", () => {
  afterEach(() => jest.useRealTimers());

  it("looks up each connected key once a round and closes the sockets of a refused key only", async () => {
    const { log, lines } = capturedLog();
    const lookups: string[] = [];
    const closed: Array<[string, number, string]> = [];
    const verdicts: Record<string, () => Promise<"valid" | KeyVerdict>> = {
      revoked: async () => REVOKED,
      valid: async () => "valid",
      authorised: async () => ({ ok: true, keyId: "authorised" }),
      unreachable: async () => {
        throw new Error("database down");
      },
    };
    const recheck = startKeyRecheck({
      intervalMs: 60_000,
      connected: () => [
        ["a", "revoked"],
        ["b", "valid"],
        ["c", "revoked"],
        ["d", "authorised"],
        ["e", "unreachable"],
      ],
      recheck: (keyId) => {
        lookups.push(keyId);
        return verdicts[keyId]!();
      },
      close: (socket, code, reason) => closed.push([socket, code, reason]),
      log,
    });
    await recheck.round();
    recheck.stop();
    expect(lookups).toEqual(["revoked", "valid", "authorised", "unreachable"]);
    expect(closed).toEqual([
      ["a", 4401, "The API key was revoked"],
      ["c", 4401, "The API key was revoked"],
    ]);
    expect(lines.map((l) => l.msg)).toEqual(["re-checking a websocket key failed; its sockets stay open"]);
  });

  it("joins the round that still runs instead of starting another", async () => {
    let lookups = 0;
    let answer: (verdict: "valid") => void = () => {};
    const recheck = startKeyRecheck({
      intervalMs: 60_000,
      connected: () => [["a", "key"]],
      recheck: () => {
        lookups++;
        return new Promise((resolve) => (answer = resolve));
      },
      close: () => {},
      log: capturedLog().log,
    });
    const first = recheck.round();
    expect(recheck.round()).toBe(first);
    expect(lookups).toBe(1);
    answer("valid");
    await first;
    const second = recheck.round();
    expect(second).not.toBe(first);
    expect(lookups).toBe(2);
    answer("valid");
    await second;
    recheck.stop();
  });

  it("starts a round every interval until stopped", async () => {
    jest.useFakeTimers();
    let lookups = 0;
    const recheck = startKeyRecheck({
      intervalMs: 1_000,
      connected: () => [["a", "key"]],
      recheck: async () => {
        lookups++;
        return "valid";
      },
      close: () => {},
      log: capturedLog().log,
    });
    expect(lookups).toBe(0);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(lookups).toBe(1);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(lookups).toBe(3);
    recheck.stop();
    await jest.advanceTimersByTimeAsync(5_000);
    expect(lookups).toBe(3);
  });
});
