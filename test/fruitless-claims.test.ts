import { FruitlessClaims } from "../src/delivery/fruitless-claims";

describe("fruitless claims", () => {
  const A = "http://a:80";
  const B = "http://b:80";

  it("asks a claim excluding at least the same origins to wait out the poll interval since the fruitless one", () => {
    const fruitless = new FruitlessClaims(500);
    expect(fruitless.waitBefore([A], 0)).toBe(0); // nothing remembered
    fruitless.claimed(0, [A], 1_000);
    expect(fruitless.waitBefore([A], 1_100)).toBe(400);
    expect(fruitless.waitBefore([B, A], 1_100)).toBe(400); // more excluded: no more to find
    expect(fruitless.waitBefore([A], 1_500)).toBe(0); // the interval is over
  });

  it("lets a claim run at once when an origin it excluded has room again", () => {
    const fruitless = new FruitlessClaims(500);
    fruitless.claimed(0, [A, B], 0);
    expect(fruitless.waitBefore([A], 10)).toBe(0);
    expect(fruitless.waitBefore([], 10)).toBe(0);
  });

  it("remembers only claims that excluded origins and found nothing, and forgets on request", () => {
    const fruitless = new FruitlessClaims(500);
    fruitless.claimed(0, [], 0); // nothing excluded: an empty queue, not a scan past a backlog
    expect(fruitless.waitBefore([], 10)).toBe(0);
    fruitless.claimed(0, [A], 0);
    fruitless.claimed(3, [A], 20); // found some: more may be there
    expect(fruitless.waitBefore([A], 30)).toBe(0);
    fruitless.claimed(0, [A], 40);
    fruitless.forget();
    expect(fruitless.waitBefore([A], 50)).toBe(0);
  });
});
