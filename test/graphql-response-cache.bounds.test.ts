import { createResponseCache, isCacheable } from "../src/graphql/response-cache";
import { STATION_CACHE_POLICY } from "../src/stations/station.resolver";
import { Disposers, startApp } from "./support/harness";
import { setWallClock } from "./support/clock";

// FRA's export counter (the bundled data set): Monday to Friday 08:00–12:00 and 13:00–17:30, Europe/Berlin.
const MONDAY_OPEN = new Date("2026-01-05T09:00:00Z"); // 10:00 in Frankfurt: open
const SUNDAY_CLOSED = new Date("2026-01-04T09:00:00Z"); // Sunday: closed

async function ask(url: string, query: string, variables?: Record<string, unknown>, now?: Date) {
  if (now) setWallClock(now);
  try {
    const res = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
    });
    return { cache: res.headers.get("x-response-cache"), body: JSON.parse(await res.text()) };
  } finally {
    if (now) jest.useRealTimers();
  }
}

describe("openAt is pinned only by a non-null instant (response cache)", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  const variableQuery = 'query($at: DateTimeISO) { station(code: "FRA") { code openAt(at: $at) } }';

  it.each([
    ["a variable omitted", variableQuery, undefined],
    ["a variable given as null", variableQuery, { at: null }],
    ["a null literal", '{ station(code: "FRA") { code openAt(at: null) } }', undefined],
    [
      "a variable with a null default",
      'query($at: DateTimeISO = null) { station(code: "FRA") { code openAt(at: $at) } }',
      undefined,
    ],
    [
      "a variable with a default, given as null",
      'query($at: DateTimeISO = "2026-01-05T09:00:00Z") { station(code: "FRA") { code openAt(at: $at) } }',
      { at: null },
    ],
  ])("never serves from the cache with %s, and answers for the clock", async (_, query, variables) => {
    const first = await ask(url, query, variables, MONDAY_OPEN);
    const second = await ask(url, query, variables, SUNDAY_CLOSED);
    expect(first).toEqual({ cache: null, body: { data: { station: { code: "FRA", openAt: true } } } });
    expect(second).toEqual({ cache: null, body: { data: { station: { code: "FRA", openAt: false } } } });
  });

  it("still serves from the cache when the instant is given, by variable, literal or default", async () => {
    const pinned: Array<[string, Record<string, unknown> | undefined]> = [
      [variableQuery, { at: "2026-01-05T09:00:00Z" }],
      ['{ station(code: "FRA") { code openAt(at: "2026-01-05T09:00:00Z") } }', undefined],
      ['query($at: DateTimeISO = "2026-01-05T09:00:00Z") { station(code: "FRA") { code openAt(at: $at) } }', undefined],
    ];
    for (const [query, variables] of pinned) {
      const first = await ask(url, query, variables, SUNDAY_CLOSED);
      const second = await ask(url, query, variables, SUNDAY_CLOSED);
      expect(first).toEqual({ cache: null, body: { data: { station: { code: "FRA", openAt: true } } } });
      expect(second).toEqual({ cache: "hit", body: first.body });
    }
  });
});

describe("which requests with openAt the cache may keep", () => {
  it.each([
    ['{ station(code: "FRA") { openAt(at: null) } }', undefined, false],
    ["query($t: DateTimeISO) { station(code: $c) { openAt(at: $t) } }", undefined, false],
    ["query($t: DateTimeISO) { station(code: $c) { openAt(at: $t) } }", { t: null }, false],
    ["query($t: DateTimeISO) { station(code: $c) { openAt(at: $t) } }", { t: "2026-01-01T00:00:00Z" }, true],
    ['query($t: DateTimeISO = "2026-01-01T00:00:00Z") { station(code: "FRA") { openAt(at: $t) } }', undefined, true],
    [
      'query A($t: DateTimeISO = "2026-01-01T00:00:00Z") { station(code: "FRA") { ...F } } query B($t: DateTimeISO) { station(code: "FRA") { ...F } } fragment F on Station { openAt(at: $t) }',
      undefined,
      false,
    ],
  ])("isCacheable(%s, %j) → %p", (query, variables, expected) => {
    expect(isCacheable(query, STATION_CACHE_POLICY, variables)).toBe(expected);
  });
});

describe("the response cache's byte bound counts keys and verdicts", () => {
  const answer = { contentType: "application/json", body: '{"data":{"stationCodes":["FRA"]}}' };
  const request = (i: number, padding: number) => ({ query: `{ stationCodes } # ${i} ${"x".repeat(padding)}` });

  it("evicts large distinct keys to stay within maxBytes", () => {
    const maxBytes = 2 * 1024 * 1024;
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1, { maxEntries: 1_000, maxBytes });
    const padding = 15_000; // under the default key limit; 30,000 bytes at two bytes per character
    for (let i = 0; i < 150; i++) expect(cache.store(request(i, padding), "", 1, answer)).toBe(true);
    expect(cache.size()).toBeGreaterThan(0);
    // Each kept entry holds its key (at least 2 × padding bytes): the bound must account for them.
    expect(cache.size() * 2 * padding).toBeLessThanOrEqual(maxBytes);
    expect(cache.bytes()).toBeLessThanOrEqual(maxBytes);
    // The least recently used went out, the latest stayed.
    expect(cache.get(request(149, padding), "")).toEqual(answer);
    expect(cache.get(request(0, padding), "")).toBeUndefined();
  });

  it("neither keeps nor looks up a query padded to the body limit", () => {
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1);
    const huge = request(1, 1024 * 1024 - 40);
    expect(cache.store(huge, "", 1, answer)).toBe(false);
    expect(cache.size()).toBe(0);
    expect(cache.get(huge, "")).toBeUndefined();
    expect(cache.bytes()).toBe(0);
  });

  it("counts a key stored twice once", () => {
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1);
    cache.store(request(1, 10), "", 1, answer);
    const once = cache.bytes();
    cache.store(request(1, 10), "", 1, answer);
    expect(cache.bytes()).toBe(once);
  });
});

describe("the response cache's entries by body text", () => {
  const answer = { contentType: "application/json", body: '{"data":{"stationCodes":["FRA"]}}' };
  const body = { query: "{ stationCodes }" };
  const text = JSON.stringify(body);

  it("answers the exact text it was stored with, for the same Accept and data version only", () => {
    let version = 1;
    const cache = createResponseCache(STATION_CACHE_POLICY, () => version);
    expect(cache.getByText(text, "")).toBeUndefined();
    expect(cache.store(body, "", 1, answer, text)).toBe(true);
    expect(cache.getByText(text, "")).toBe(answer);
    expect(cache.getByText(`${text} `, "")).toBeUndefined();
    expect(cache.getByText(text, "application/graphql-response+json")).toBeUndefined();
    version = 2;
    expect(cache.getByText(text, "")).toBeUndefined();
  });

  it("keeps nothing by text that it would not keep parsed", () => {
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1);
    const clock = { query: '{ station(code: "FRA") { openAt } }' };
    expect(cache.store(clock, "", 1, answer, JSON.stringify(clock))).toBe(false);
    expect(cache.getByText(JSON.stringify(clock), "")).toBeUndefined();
    expect(cache.size()).toBe(0);
  });

  it("counts both keys, each with the answer, within the bound", () => {
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1);
    cache.store(body, "", 1, answer);
    const parsedOnly = cache.bytes();
    const other = createResponseCache(STATION_CACHE_POLICY, () => 1);
    other.store(body, "", 1, answer, text);
    expect(other.size()).toBe(2);
    expect(other.bytes()).toBeGreaterThanOrEqual(parsedOnly + 2 * (text.length + answer.body.length));
    const maxBytes = 256 * 1024;
    const bounded = createResponseCache(STATION_CACHE_POLICY, () => 1, { maxBytes });
    for (let i = 0; i < 500; i++) {
      const each = { query: `{ stationCodes } # ${i} ${"x".repeat(500)}` };
      bounded.store(each, "", 1, answer, JSON.stringify(each));
    }
    expect(bounded.bytes()).toBeLessThanOrEqual(maxBytes);
  });

  it("neither keeps nor looks up a text over the key limit", () => {
    const cache = createResponseCache(STATION_CACHE_POLICY, () => 1, { maxKeyChars: 64 });
    const padded = `${text}${" ".repeat(64)}`;
    expect(cache.store(body, "", 1, answer, padded)).toBe(true);
    expect(cache.size()).toBe(1);
    expect(cache.getByText(padded, "")).toBeUndefined();
  });
});
