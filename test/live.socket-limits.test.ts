import { createRateLimiter } from "../src/http/rate-limit";
import { refuseMessage, refuseOperationOverLimit } from "../src/live/socket-limits";

describe("a socket's message limits", () => {
  const subscribe = JSON.stringify({ id: "1", type: "subscribe", payload: { query: "{ health { status } }" } });

  it("takes one of the key's tokens per message once the key is known, and closes with 4429 when none is left", () => {
    const limiter = createRateLimiter({ perSecond: 1, burst: 2, now: () => 0 });
    const taken: string[] = [];
    const take = (keyId: string) => {
      taken.push(keyId);
      limiter.takeWithoutWaiting(keyId);
    };
    expect(refuseMessage(subscribe, undefined, take)).toBeUndefined(); // before the handshake: no key to charge
    expect(refuseMessage(subscribe, "k", take)).toBeUndefined();
    expect(refuseMessage(subscribe, "k", take)).toBeUndefined();
    const refusal = refuseMessage(subscribe, "k", take);
    expect(taken).toEqual(["k", "k", "k"]);
    expect(refusal?.code).toBe(4429);
    expect(refusal?.reason).toMatch(/over its limit/);
  });

  it("says 'Too many messages' when the token taker fails with something other than an AppError", () => {
    const refusal = refuseMessage(subscribe, "k", () => {
      throw new Error("boom");
    });
    expect(refusal).toEqual({ code: 4429, reason: "Too many messages" });
  });

  it("closes with 4400 on a message of a server-only type, and leaves anything else to graphql-ws", () => {
    const free = () => {};
    for (const type of ["connection_ack", "next", "error"]) {
      expect(refuseMessage(JSON.stringify({ id: "1", type }), undefined, free)).toEqual({
        code: 4400,
        reason: "Clients may not send connection_ack, next or error messages",
      });
    }
    // The type's text inside a query, and text that is not JSON, are graphql-ws's to judge.
    const quoted = JSON.stringify({
      id: "1",
      type: "subscribe",
      payload: { query: '{ x(s: "\\"type\\":\\"next\\"") }' },
    });
    expect(refuseMessage(quoted, undefined, free)).toBeUndefined();
    expect(refuseMessage('{"type":"next"', undefined, free)).toBeUndefined();
    expect(refuseMessage(JSON.stringify({ type: "ping" }), undefined, free)).toBeUndefined();
  });
});

describe("a socket's operation limit", () => {
  it("admits operations below the limit and refuses the one past it with RATE_LIMITED", () => {
    expect(refuseOperationOverLimit(0, 2)).toBeUndefined();
    expect(refuseOperationOverLimit(1, 2)).toBeUndefined();
    const refused = refuseOperationOverLimit(2, 2);
    expect(refused?.extensions).toEqual({ code: "RATE_LIMITED" });
    expect(refused?.message).toBe("This socket already runs 2 operations (at most 2); open another socket or stop one");
  });
});
