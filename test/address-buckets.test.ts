import { createAddressBuckets } from "../src/http/address-buckets";
import { createAnonymousBudget } from "../src/http/anonymous-budget";
import { refuseIfWaiting } from "../src/http/rate-limit";
import { AppError } from "../src/errors";

describe("per-address token buckets", () => {
  it("share one bucket within an IPv6 /64 and between an IPv4 address and its IPv4-mapped form", () => {
    const buckets = createAddressBuckets({ perSecond: 1, burst: 2, now: () => 0 });
    expect(buckets.take("2001:db8:1:2::1")).toBe(0);
    expect(buckets.take("2001:db8:1:2:ffff::2")).toBe(0);
    expect(buckets.take("2001:db8:1:2::3")).toBe(1);
    expect(buckets.take("2001:db8:1:3::1")).toBe(0); // the next /64 has its own
    expect(buckets.take("203.0.113.7")).toBe(0);
    expect(buckets.take("::ffff:203.0.113.7")).toBe(0);
    expect(buckets.take("203.0.113.7")).toBe(1);
    expect(buckets.size()).toBe(3);
  });

  it("take back a token given back under any address of the same budget", () => {
    let now = 0;
    const buckets = createAddressBuckets({ perSecond: 2, burst: 1, now: () => now });
    expect(buckets.take("203.0.113.7")).toBe(0);
    expect(buckets.take("203.0.113.7")).toBe(1);
    buckets.giveBack("::ffff:203.0.113.7");
    expect(buckets.take("203.0.113.7")).toBe(0);
    now += 500;
    expect(buckets.take("203.0.113.7")).toBe(0);
  });
});

describe("refuseIfWaiting", () => {
  it("lets a taken token through and refuses a wait with RATE_LIMITED, the limit and the seconds to wait", () => {
    expect(() => refuseIfWaiting(0, "over")).not.toThrow();
    let refusal: unknown;
    try {
      refuseIfWaiting(3, "Too many things (at most 2 a second)");
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({
      code: "RATE_LIMITED",
      message: "Too many things (at most 2 a second); retry in 3 s",
      retryAfterSeconds: 3,
    });
  });
});

describe("the anonymous GraphQL budget", () => {
  it("refuses an address past its burst, saying so, and spends nothing when turned off", () => {
    const budget = createAnonymousBudget({ perSecond: 1, burst: 1, now: () => 0 });
    void budget.spend("198.51.100.1");
    expect(() => budget.spend("198.51.100.1")).toThrow(
      "Too many GraphQL requests without an API key from this address (at most 1 a second); retry in 1 s",
    );
    const off = createAnonymousBudget({ perSecond: 0, burst: 1 });
    for (let i = 0; i < 10; i++) expect(() => off.spend("198.51.100.1")).not.toThrow();
  });
});
