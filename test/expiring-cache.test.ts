import { ExpiringCache } from "../src/clients/expiring-cache";

function cacheAt(ttlMs = 1_000, maxEntries = 10) {
  const clock = { t: 0 };
  return { clock, cache: new ExpiringCache<string, number>(ttlMs, maxEntries, () => clock.t) };
}

describe("an expiring cache", () => {
  it("answers a remembered value until its time to live has passed", () => {
    const { clock, cache } = cacheAt();
    expect(cache.get("a")).toBeUndefined();
    expect(cache.remember("a", 1, cache.mark())).toBe(true);
    clock.t = 999;
    expect(cache.get("a")).toBe(1);
    clock.t = 1_000;
    expect(cache.get("a")).toBeUndefined();
  });

  it("does not remember a read that started before a forget, of that key or any other", () => {
    const { cache } = cacheAt();
    const beforeForgetAll = cache.mark();
    cache.forget();
    expect(cache.remember("a", 1, beforeForgetAll)).toBe(false);
    const beforeForgetB = cache.mark();
    cache.forget("b");
    expect(cache.remember("a", 1, beforeForgetB)).toBe(false);
    expect(cache.get("a")).toBeUndefined();
    expect(cache.remember("a", 2, cache.mark())).toBe(true);
    expect(cache.get("a")).toBe(2);
  });

  it("forgets one key or all of them", () => {
    const { cache } = cacheAt();
    for (const key of ["a", "b", "c"]) cache.remember(key, 1, cache.mark());
    cache.forget("a");
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual([undefined, 1, 1]);
    cache.forget();
    expect([cache.get("b"), cache.get("c")]).toEqual([undefined, undefined]);
  });

  it("drops a key without voiding the reads under way", () => {
    const { cache } = cacheAt();
    cache.remember("a", 1, cache.mark());
    const underWay = cache.mark();
    cache.delete("a");
    expect(cache.get("a")).toBeUndefined();
    expect(cache.remember("b", 2, underWay)).toBe(true);
  });

  it("starts again empty when full", () => {
    const { cache } = cacheAt(1_000, 3);
    for (const key of ["a", "b", "c"]) cache.remember(key, 1, cache.mark());
    cache.remember("d", 4, cache.mark());
    expect([cache.get("a"), cache.get("b"), cache.get("c"), cache.get("d")]).toEqual([
      undefined,
      undefined,
      undefined,
      4,
    ]);
  });

  it("gives a remembered value again a full time to live when it is remembered anew", () => {
    const { clock, cache } = cacheAt();
    cache.remember("a", 1, cache.mark());
    clock.t = 900;
    cache.remember("a", 2, cache.mark());
    clock.t = 1_800;
    expect(cache.get("a")).toBe(2);
  });
});
