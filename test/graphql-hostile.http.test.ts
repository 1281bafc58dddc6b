/**
 * Against the running gateway: a 1.2 KB document of 24 fragments, each spreading the next twice, sent
 * without a key, is answered while /healthz keeps answering; documents past GRAPHQL_MAX_TOKENS are
 * refused before they are validated, over HTTP and websockets; GraphQL requests without a key spend
 * a budget per client address (GRAPHQL_ANONYMOUS_LIMIT_*), one for all instances with REDIS_URL.
 */
import http from "node:http";
import { ANONYMOUS_MAX_COST } from "../src/graphql-core/operation-limits";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { startPrivateRedis } from "./support/private-services";
import type Redis from "ioredis";
import {
  type Counted,
  expectDecidedByWindows,
  lastWindow,
  limitsCountedIn,
  redisReader,
  sendCounted,
} from "./support/shared-limits";
import { openSubscriber } from "./support/ws-protocol";
import { until } from "./support/webhooks";

/** The doubling document: n fragments on Query, each selecting __typename and spreading the next twice. */
function doubling(n: number): string {
  let text = "{ ...F1 }";
  for (let i = 1; i < n; i++) text += ` fragment F${i} on Query { __typename ...F${i + 1} ...F${i + 1} }`;
  return `${text} fragment F${n} on Query { __typename }`;
}

/** How long one /healthz may take before the server counts as stopped: a liveness bound, not a performance claim. */
const HEALTHZ_BOUND_MS = 2_000;

async function healthz(url: string): Promise<number | string> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(HEALTHZ_BOUND_MS) })).status;
  } catch (error) {
    return `no answer within ${HEALTHZ_BOUND_MS} ms (${(error as Error).name})`;
  }
}

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: any;
}

/** POSTs a GraphQL query from `localAddress` (any 127/8 address reaches the server on 127.0.0.1). */
function graphqlFrom(url: string, localAddress: string, query: string, authorization?: string): Promise<Answer> {
  const body = JSON.stringify({ query });
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${url}/graphql`,
      {
        method: "POST",
        localAddress,
        timeout: 15_000,
        headers: {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(body),
          ...(authorization ? { authorization } : {}),
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode!,
            retryAfter: response.headers["retry-after"],
            body: JSON.parse(text),
          }),
        );
      },
    );
    request.on("timeout", () => request.destroy(new Error("no answer within 15 s")));
    request.on("error", reject);
    request.end(body);
  });
}

describe("a hostile GraphQL document against the running gateway", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  it("answers a 24-fragment doubling document sent without a key, and /healthz answers throughout", async () => {
    const query = doubling(24);
    expect(query.length).toBeLessThan(1_300);
    let answered = false;
    const answer = postJson(`${url}/graphql`, { query }).finally(() => (answered = true));
    // At least three polls, however fast the answer: a poll that could not happen would prove nothing.
    const polls: Array<number | string> = [];
    while (!answered || polls.length < 3) {
      polls.push(await healthz(url));
      if (polls.at(-1) !== 200) break;
    }
    expect(polls.filter((status) => status !== 200)).toEqual([]);
    const { status, body } = await answer;
    expect(status).toBe(400);
    expect(body).toEqual({
      errors: [
        {
          message: `The operation would cost ${2 ** 24 - 1} (fields, with lists counted by their size); at most ${ANONYMOUS_MAX_COST} is allowed without an API key`,
          extensions: { code: "QUERY_TOO_COMPLEX" },
        },
      ],
    });
  }, 120_000);

  it("refuses the same document over a websocket by its cost", async () => {
    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("bomb", doubling(24), {});
    await until(() => subscriber.errors.length > 0, { what: "the refusal" });
    expect(subscriber.errors).toEqual([
      [
        {
          message: `The operation would cost ${2 ** 24 - 1} (fields, with lists counted by their size); at most 300000 is allowed`,
          extensions: { code: "QUERY_TOO_COMPLEX" },
        },
      ],
    ]);
  });

  it("refuses a document of more than GRAPHQL_MAX_TOKENS (2,000) tokens unparsed, and takes one at the limit", async () => {
    // `{`, `}` and six tokens per inline fragment: 2,006 tokens, and 2,000.
    const over = `{ ${"... on Query { __typename } ".repeat(334)}}`;
    const at = `{ ${"... on Query { __typename } ".repeat(333)}}`;
    const refusal = {
      errors: [
        {
          // graphql-js's own words ("more that", in 16.x).
          message: expect.stringMatching(
            /^Syntax Error: Document contains more tha[nt] 2000 tokens\. Parsing aborted\.$/,
          ),
          extensions: { code: "QUERY_TOO_COMPLEX" },
        },
      ],
    };
    expect(await postJson(`${url}/graphql`, { query: over })).toMatchObject({ status: 400, body: refusal });
    expect(await postJson(`${url}/graphql`, { query: at })).toMatchObject({
      status: 200,
      body: { data: { __typename: "Query" } },
    });
    // A list argument of 1,000 station codes written out (GRAPHQL_MAX_LIST_ARGUMENT) fits in the limit.
    const codes = Array.from({ length: 1_000 }, (_, i) => `"C${i}"`).join(" ");
    const listed = await postJson(`${url}/graphql`, { query: `{ stations(codes: [${codes}]) { code } }` });
    expect(listed.body.errors?.[0]?.message ?? "").not.toContain("tokens");

    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("over", over, {});
    subscriber.subscribe("at", at, {});
    await until(() => subscriber.errors.length + subscriber.received.length >= 2, { what: "both answers" });
    expect(subscriber.errors).toMatchObject([refusal.errors]);
    expect(subscriber.received).toEqual([{ __typename: "Query" }]);
  });
});

describe("subscription operations the server cannot run", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  // Found by test/graphql.fuzz.test.ts: over HTTP each was INTERNAL (a 200 or a 500), over the
  // websocket the skipped root field closed the socket 4500.
  const overHttp = {
    message: "Subscriptions run over the websocket at /graphql (graphql-transport-ws), not over HTTP",
    extensions: { code: "VALIDATION_FAILED" },
  };
  const awb = '"020-12345675"';

  it("refuses a subscription over HTTP as a request error naming the websocket (POST, GET, batched; with or without a key)", async () => {
    const plain = `subscription { awbStatusChanged(awb: ${awb}) { state } }`;
    // graphql-js 16 throws while validating this one (a variable in @include at a subscription's root).
    const conditional = `subscription S($on: Boolean!) { awbStatusChanged(awb: ${awb}) @include(if: $on) { state } }`;
    for (const query of [plain, conditional]) {
      const body = { query, variables: { on: false } };
      expect(await postJson(`${url}/graphql`, body)).toMatchObject({ status: 400, body: { errors: [overHttp] } });
      expect(await postJson(`${url}/graphql`, body, { authorization: `Bearer ${ADMIN_KEY}` })).toMatchObject({
        status: 400,
        body: { errors: [overHttp] },
      });
      const get = await fetch(`${url}/graphql?${new URLSearchParams({ query, variables: '{"on":false}' })}`, {
        headers: { "apollo-require-preflight": "true" },
      });
      expect([get.status, await get.json()]).toEqual([400, { errors: [overHttp] }]);
      // Batched with a key: without one, a request holds one operation.
      const batched = [{ query: "{ stationCodes }" }, body];
      expect(await postJson(`${url}/graphql`, batched, { authorization: `Bearer ${ADMIN_KEY}` })).toMatchObject({
        status: 400,
        body: { errors: [overHttp] },
      });
    }
    // A query that selects the `subscription` field is no subscription operation.
    const field = await postJson(`${url}/graphql`, { query: '{ subscription(id: "x") { __typename } }' });
    expect(field.body.errors?.[0]?.message).not.toBe(overHttp.message);
  });

  it("refuses @skip or @include on a subscription's root field over the websocket, literal or variable", async () => {
    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("literal", `subscription { awbStatusChanged(awb: ${awb}) @include(if: false) { state } }`, {});
    subscriber.subscribe(
      "fragment",
      `subscription S { ...F } fragment F on Subscription { awbStatusChanged(awb: ${awb}) @skip(if: true) { state } }`,
      {},
    );
    subscriber.subscribe(
      "variable",
      `subscription V($on: Boolean!) { awbStatusChanged(awb: ${awb}) @include(if: $on) { state } }`,
      { on: true },
    );
    await until(() => subscriber.errors.length === 3, { what: "three refusals" });
    expect(subscriber.errors).toEqual([
      [
        {
          message: "Subscription must not use @skip or @include in its top-level selection",
          locations: [{ line: 1, column: 16 }],
          extensions: { code: "VALIDATION_FAILED" },
        },
      ],
      [
        {
          message: 'Subscription "S" must not use @skip or @include in its top-level selection',
          locations: [{ line: 1, column: 54 }],
          extensions: { code: "VALIDATION_FAILED" },
        },
      ],
      // graphql-js 16 throws inside its own rule before ours reports: its words, in the contract's shape.
      [
        expect.objectContaining({
          message: expect.stringContaining('Argument "if" of required type "Boolean!" was provided the variable "$on"'),
          extensions: { code: "VALIDATION_FAILED" },
        }),
      ],
    ]);
    expect(subscriber.socket.readyState).toBe(subscriber.socket.OPEN);
  });
});

describe("the budget of GraphQL requests without a key, per client address", () => {
  const disposers = new Disposers();
  let url: string;
  const limits = { GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "1", GRAPHQL_ANONYMOUS_LIMIT_BURST: "5" };
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, limits));
  });
  afterAll(() => disposers.disposeAll());

  const query = "{ __typename }";

  it("answers 429 RATE_LIMITED with Retry-After past it; another address, or a key, is not affected", async () => {
    const exhausted = "127.0.0.3";
    const answers: Answer[] = [];
    // The burst, then at most one more token a second: sent one after another, one is refused soon.
    while (answers.length < 30 && answers.at(-1)?.status !== 429)
      answers.push(await graphqlFrom(url, exhausted, query));
    expect(answers.slice(0, 5).map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.at(-1)).toEqual({
      status: 429,
      retryAfter: "1",
      body: {
        errors: [
          {
            message:
              "Too many GraphQL requests without an API key from this address (at most 1 a second); retry in 1 s",
            extensions: { code: "RATE_LIMITED", retryAfterSeconds: 1 },
          },
        ],
      },
    });

    // Another address has a budget of its own; a key spends the key's budget, not the address's.
    for (let i = 0; i < 5; i++) {
      expect((await graphqlFrom(url, "127.0.0.4", query)).status).toBe(200);
      expect((await graphqlFrom(url, exhausted, query, `Bearer ${ADMIN_KEY}`)).status).toBe(200);
    }
    // A key that does not authenticate is no way around the budget (a token may have come back meanwhile).
    const unknownKey = "Bearer cgw_this-key-was-never-issued-by-anyone-0000";
    const withUnknownKey: number[] = [];
    for (let i = 0; i < 5; i++) withUnknownKey.push((await graphqlFrom(url, exhausted, query, unknownKey)).status);
    expect(withUnknownKey).toContain(429);
  });

  it("still answers a station query sent with an unknown key from an address within its budget", async () => {
    const unknownKey = "Bearer cgw_this-key-was-never-issued-by-anyone-0000";
    const answer = await graphqlFrom(url, "127.0.0.5", '{ station(code: "FRA") { code } }', unknownKey);
    expect(answer).toMatchObject({ status: 200, body: { data: { station: { code: "FRA" } } } });
  });
});

describe("the budget of GraphQL requests without a key, shared by two instances through one Redis", () => {
  const disposers = new Disposers();
  let a: string;
  let b: string;
  let reader: Redis;
  // One window of 10 s holding 10 requests (shared-buckets.ts).
  const PER_WINDOW = 10;
  const limits = { GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "1", GRAPHQL_ANONYMOUS_LIMIT_BURST: String(PER_WINDOW) };
  beforeAll(async () => {
    const redis = await startPrivateRedis();
    disposers.add(() => redis.dispose());
    reader = await redisReader(redis.url);
    disposers.add(async () => void (await reader.quit()));
    ({ url: a } = await startApp("pglite", disposers, { REDIS_URL: redis.url, ...limits }));
    ({ url: b } = await startApp("pglite", disposers, { REDIS_URL: redis.url, ...limits }));
    await limitsCountedIn(a, "redis");
    await limitsCountedIn(b, "redis");
  });
  afterAll(() => disposers.disposeAll());

  it("gives one address one budget across both instances", async () => {
    type OnInstance = Counted<Answer & { on: string }>;
    // Until one window has refused requests on both instances: each alone would have answered 10 in it.
    const refusedOnBoth = (answers: OnInstance[]) => {
      const refused = lastWindow(answers).filter((answer) => answer.status === 429);
      return refused.some((answer) => answer.on === a) && refused.some((answer) => answer.on === b);
    };
    const answers = await sendCounted(
      reader,
      "cgw:limits:anonymous:127.0.0.6",
      async (i) => {
        const on = i % 2 === 0 ? a : b;
        return { ...(await graphqlFrom(on, "127.0.0.6", "{ __typename }")), on };
      },
      { enough: refusedOnBoth, max: 100 },
    );
    expect(refusedOnBoth(answers)).toBe(true);
    // Each request took the next place in the one window both count in: 200 up to 10, then 429.
    expectDecidedByWindows(answers, PER_WINDOW, 200);
    expect(lastWindow(answers).filter((answer) => answer.status === 200)).toHaveLength(PER_WINDOW);
  });
});
