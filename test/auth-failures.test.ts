/**
 * Failed authentications are budgeted per client address: past the budget, a key the key cache does
 * not know is answered 429 without a database read, while a remembered key from the same address
 * keeps working. Key reads are counted on the wire to PostgreSQL (a proxy reads the protocol).
 */
import http from "node:http";
import WebSocket from "ws";
import { randomBytes } from "node:crypto";
import { budgetNameOf } from "../src/http/address-buckets";
import { createAuthFailureBudget } from "../src/http/auth-failures";
import { createTokenBuckets } from "../src/http/rate-limit";
import { AppError } from "../src/errors";
import type { App } from "../src/app";
import { ADMIN_KEY, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, REQUEST_TIMEOUT_MS } from "./support/http";
import { startPgWireCounter } from "./support/pg-wire-counter";
import { createPostgresDatabase } from "./support/postgres";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const unknownKey = () => `cgw_${randomBytes(32).toString("base64url")}`;

describe("the failure budget's bookkeeping", () => {
  it("budgets an IPv4 address by itself (also IPv4-mapped) and an IPv6 address by its /64", () => {
    expect(budgetNameOf("203.0.113.7")).toBe("203.0.113.7");
    expect(budgetNameOf("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(budgetNameOf("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(budgetNameOf("2001:db8:1:2:bbbb::9")).toBe("2001:db8:1:2::/64");
    expect(budgetNameOf("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
  });

  it("refuses past the burst with the seconds until an attempt is free, refills, and takes refunds", () => {
    let now = 0;
    const budget = createAuthFailureBudget({ perSecond: 2, burst: 3, now: () => now });
    for (let i = 0; i < 3; i++) budget.spend("198.51.100.1");
    const refusal = (() => {
      try {
        budget.spend("198.51.100.1");
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refusal).toBeInstanceOf(AppError);
    expect(refusal).toMatchObject({ code: "RATE_LIMITED", retryAfterSeconds: 1 });
    budget.spend("198.51.100.2"); // another address has its own budget
    budget.refund("198.51.100.1");
    budget.spend("198.51.100.1");
    expect(() => budget.spend("198.51.100.1")).toThrow(/failed authentications/);
    now += 500; // one attempt back at 2 a second
    budget.spend("198.51.100.1");
    expect(() => budget.spend("198.51.100.1")).toThrow(AppError);
  });

  it("spends nothing when turned off", () => {
    const budget = createAuthFailureBudget({ perSecond: 0, burst: 1 });
    for (let i = 0; i < 100; i++) budget.spend("198.51.100.1");
    expect(budget.addresses()).toBe(0);
  });

  it("keeps at most its bound of buckets, dropping the least recently used", () => {
    let now = 0;
    const buckets = createTokenBuckets({ perSecond: 1, burst: 1, maxNames: 3, now: () => now });
    for (const name of ["a", "b", "c"]) expect(buckets.take(name)).toBe(0);
    expect(buckets.take("a")).toBe(1); // a is now the most recently used, and empty
    expect(buckets.take("d")).toBe(0); // b, the least recently used, is dropped
    expect(buckets.size()).toBe(3);
    expect(buckets.take("a")).toBe(1); // a's debt was kept
    expect(buckets.take("b")).toBe(0); // b starts full again (and c is dropped)
    expect(buckets.size()).toBe(3);
    now += 1_000;
    expect(buckets.take("a")).toBe(0);
  });

  it("loses no tokens when its clock goes back", () => {
    let now = 1_000_000;
    const buckets = createTokenBuckets({ perSecond: 1, burst: 5, maxNames: 10, now: () => now });
    expect(buckets.take("k")).toBe(0); // 4 left
    now -= 3_600_000; // a clock stepped back an hour
    for (let i = 0; i < 4; i++) expect(buckets.take("k")).toBe(0);
    expect(buckets.take("k")).toBe(1);
  });
});

/** A GET from a given local address (Linux routes all of 127.0.0.0/8 to the loopback interface). */
function getFrom(localAddress: string, url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { localAddress, headers, timeout: REQUEST_TIMEOUT_MS }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode!));
    });
    request.on("timeout", () => request.destroy(new Error("timed out")));
    request.on("error", reject);
  });
}

describeBackend("postgres")("failed authentications per client address, key reads counted on the wire", () => {
  const disposers = new Disposers();
  let counter: Awaited<ReturnType<typeof startPgWireCounter>>;
  let app: App;
  let url: string;
  let subscriptions: string;

  beforeAll(async () => {
    const database = await createPostgresDatabase();
    disposers.add(database.drop);
    counter = await startPgWireCounter(database.url);
    disposers.add(() => counter.close());
    // No delivery worker: its polling would be counted too. One failed attempt a second, five at once.
    ({ app, url } = await startApp("postgres", disposers, {
      DATABASE_URL: counter.url,
      DELIVERY_WORKER: "false",
      RATE_LIMIT_PER_SECOND: "0",
      AUTH_FAILURE_LIMIT_PER_SECOND: "1",
      AUTH_FAILURE_LIMIT_BURST: "5",
    }));
    subscriptions = `${url}/carrier/handling/shipment/subscribe`;
  }, 180_000);
  afterAll(() => disposers.disposeAll());

  const keyReads = () => counter.statements().filter((s) => /FROM "public"\."api_key"/.test(s)).length;
  /** A request with its status, its body's code, its Retry-After and the key reads it cost. */
  async function counted(authorization: string, target = subscriptions) {
    counter.reset();
    const res = await getJson(target, { headers: { authorization } });
    return {
      status: res.status,
      type: res.headers.get("content-type"),
      code: res.body?.code as string | undefined,
      retryAfter: res.headers.get("retry-after"),
      reads: keyReads(),
    };
  }
  /** Spends this address's budget with unknown keys until one is refused; answers the refusal. */
  async function exhaust() {
    for (let i = 0; i < 20; i++) {
      const answer = await counted(`Bearer ${unknownKey()}`);
      if (answer.status === 429) return answer;
      expect(answer).toMatchObject({ status: 401, code: "UNAUTHENTICATED", reads: 1 });
    }
    throw new Error("20 unknown keys and still no 429");
  }

  it("spends no attempt on requests that join a lookup under way: a burst with one valid key not yet remembered", async () => {
    // First in this file: the key is not remembered yet. Twenty at once from one address, five attempts.
    counter.reset();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => getJson(subscriptions, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 20 }, () => 200));
    expect(keyReads()).toBe(1);
  });

  it("answers a burst of unknown keys 401 up to the budget, then 429 with Retry-After and no read", async () => {
    const started = Date.now();
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push(await counted(`Bearer ${unknownKey()}`));
    const seconds = Math.ceil((Date.now() - started) / 1000);
    const refused = answers.filter((a) => a.status === 401);
    const limited = answers.filter((a) => a.status === 429);
    // Five at once, and at most one more for each second the burst took.
    expect(refused.length).toBeGreaterThanOrEqual(5);
    expect(refused.length).toBeLessThanOrEqual(5 + seconds);
    expect(refused.length + limited.length).toBe(12);
    for (const answer of refused) expect(answer).toMatchObject({ code: "UNAUTHENTICATED", reads: 1 });
    for (const answer of limited) {
      expect(answer).toMatchObject({ type: "application/problem+json; charset=utf-8", code: "RATE_LIMITED", reads: 0 });
      expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    expect(answers.slice(0, 5).every((a) => a.status === 401)).toBe(true);
  });

  it("keeps answering a remembered valid key from the exhausted address", async () => {
    // A key that is not remembered needs a free attempt to be looked up (see below): wait for one.
    await sleep(1_100);
    expect((await counted(`Bearer ${ADMIN_KEY}`)).status).toBe(200); // remembered from here on, for 5 s
    const limited = await exhaust();
    expect(limited).toMatchObject({ code: "RATE_LIMITED", reads: 0 });
    expect(await counted(`Bearer ${ADMIN_KEY}`)).toMatchObject({ status: 200, reads: 0 });
    expect(await counted(`Bearer ${unknownKey()}`)).toMatchObject({ status: 429, reads: 0 });
  });

  it("answers malformed keys, GraphQL over HTTP and keys not remembered 429 too, but not another address", async () => {
    await exhaust();
    expect(await counted("Basic dXNlcjpwYXNz")).toMatchObject({ status: 429, code: "RATE_LIMITED" });
    await exhaust();
    counter.reset();
    const graphql = await getJson(`${url}/graphql`, {
      method: "POST",
      headers: { authorization: `Bearer ${unknownKey()}`, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ clients { id } }" }),
    });
    expect(graphql.body.errors[0].extensions.code).toBe("RATE_LIMITED");
    expect(keyReads()).toBe(0);

    // A valid key the cache does not hold is not looked up either (decided: the budget comes before
    // the read); it works again once the address has an attempt free.
    const { clientId } = await app.services.clients.createClient({ name: "fresh key", callbackPrefixes: ["*"] });
    const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
    await exhaust();
    expect(await counted(`Bearer ${key}`)).toMatchObject({ status: 429, reads: 0 });

    // Another address on the same host has a budget of its own.
    counter.reset();
    expect(await getFrom("127.0.0.2", subscriptions, { authorization: `Bearer ${unknownKey()}` })).toBe(401);
    expect(keyReads()).toBe(1);
  });

  it("closes a websocket whose connection_init brings an unknown key from an exhausted address, with no read", async () => {
    expect.assertions(3);
    await exhaust();
    counter.reset();
    const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    socket.on("open", () =>
      socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${unknownKey()}` } })),
    );
    const [code, reason] = await new Promise<[number, string]>((resolve) =>
      socket.on("close", (closeCode: number, closeReason: Buffer) => resolve([closeCode, closeReason.toString()])),
    );
    expect(code).toBe(4429);
    expect(reason).toMatch(/attempt|authentication|many/i);
    expect(keyReads()).toBe(0);
  });

  it("refills the budget: after Retry-After an unknown key is looked up (401) and a valid one works", async () => {
    const limited = await exhaust();
    await sleep(Number(limited.retryAfter) * 1000 + 100);
    expect(await counted(`Bearer ${unknownKey()}`)).toMatchObject({ status: 401, code: "UNAUTHENTICATED", reads: 1 });
    await exhaust();
    await sleep(1_100);
    const { clientId } = await app.services.clients.createClient({ name: "after refill", callbackPrefixes: ["*"] });
    const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
    expect(await counted(`Bearer ${key}`)).toMatchObject({ status: 200, reads: 1 });
    // The valid key's attempt was given back: the next unknown key is still looked up.
    expect(await counted(`Bearer ${unknownKey()}`)).toMatchObject({ status: 401, reads: 1 });
  });
});
