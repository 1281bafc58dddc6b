import { FAST_ORIGIN_MS, OriginPacing, PREFETCH_FACTOR, SATURATED_DEFER_MS } from "../src/delivery/origin-pacing";

const A = "http://a:80";
const PER_ORIGIN = 2;

describe("an origin's pace", () => {
  it("is unknown until timed: neither fast nor known slow, holding one round of claims", () => {
    const pacing = new OriginPacing(PER_ORIGIN);
    expect([pacing.isFast(A), pacing.isKnownSlow(A), pacing.prefetchFor(A)]).toEqual([false, false, PER_ORIGIN]);
  });

  it("lets a fast origin hold PREFETCH_FACTOR times its concurrency, a slow one its concurrency", () => {
    const pacing = new OriginPacing(PER_ORIGIN);
    pacing.observe(A, FAST_ORIGIN_MS - 1);
    expect([pacing.isFast(A), pacing.prefetchFor(A)]).toEqual([true, PER_ORIGIN * PREFETCH_FACTOR]);
    pacing.observe("http://slow:80", FAST_ORIGIN_MS);
    expect([pacing.isKnownSlow("http://slow:80"), pacing.prefetchFor("http://slow:80")]).toEqual([true, PER_ORIGIN]);
  });

  it("follows a moving average: one slow send does not make a fast origin slow", () => {
    const pacing = new OriginPacing(PER_ORIGIN);
    pacing.observe(A, 100);
    pacing.observe(A, 600); // 0.8 × 100 + 0.2 × 600 = 200
    expect(pacing.isFast(A)).toBe(true);
    pacing.observe(A, 600); // 0.8 × 200 + 0.2 × 600 = 280
    expect(pacing.isKnownSlow(A)).toBe(true);
  });
});

describe("deferring a saturated origin's backlog", () => {
  const slowPacing = () => {
    const pacing = new OriginPacing(PER_ORIGIN);
    pacing.observe(A, 2_000);
    return pacing;
  };

  it("applies only to an origin known to be slow with every slot busy", () => {
    const pacing = new OriginPacing(PER_ORIGIN);
    expect(pacing.takeDeferral(A, PER_ORIGIN, 0)).toBe(false); // not timed yet
    pacing.observe("http://fast:80", 1);
    expect(pacing.takeDeferral("http://fast:80", PER_ORIGIN, 0)).toBe(false);
    expect(slowPacing().takeDeferral(A, PER_ORIGIN - 1, 0)).toBe(false);
    expect(slowPacing().takeDeferral(A, PER_ORIGIN, 0)).toBe(true);
  });

  it("at most once per SATURATED_DEFER_MS, afresh once the origin stopped sending", () => {
    const pacing = slowPacing();
    expect(pacing.takeDeferral(A, PER_ORIGIN, 5_000)).toBe(true);
    expect(pacing.takeDeferral(A, PER_ORIGIN, 5_000 + SATURATED_DEFER_MS - 1)).toBe(false);
    pacing.forgetDeferralsUnless(() => true);
    expect(pacing.takeDeferral(A, PER_ORIGIN, 5_000 + SATURATED_DEFER_MS - 1)).toBe(false);
    pacing.forgetDeferralsUnless(() => false);
    expect(pacing.takeDeferral(A, PER_ORIGIN, 5_000 + 1)).toBe(true);
    expect(pacing.takeDeferral(A, PER_ORIGIN, 5_000 + 1 + SATURATED_DEFER_MS)).toBe(true);
  });
});
