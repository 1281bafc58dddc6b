/**
 * Bad input at scale: generated malformed requests (fast-check) against every REST route, GraphQL
 * over HTTP, and every graphql-transport-ws message type. Every answer must be a well-formed
 * problem+json (REST) or GraphQL error, never a 5xx or a hang; the server must be healthy after.
 * Fixed seeds, so a failure is reproducible; fast-check shrinks it to a small counterexample.
 */
import fc from "fast-check";
import WebSocket from "ws";
import { ERROR_TABLE } from "../src/errors";
import { startReceiver } from "./support/receiver";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { runsInSuite } from "./support/suite";

const RUNS = { rest: runsInSuite(7_000), graphql: runsInSuite(3_000), websocket: runsInSuite(500) }; // websocket runs send ~5 messages each
/** The error table's codes; `has` takes whatever an answer held. */
const CODES: ReadonlySet<unknown> = new Set(Object.keys(ERROR_TABLE));
const counts = { rest: 0, graphql: 0, websocketMessages: 0, statuses: new Map<number, number>() };

// ---- generators -----------------------------------------------------------------------------------
const junkText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "../../etc/passwd",
    "%00",
    "%zz",
    "020-12345675",
    "02012345675",
    "FRA",
    "fra",
    "*",
    "DEP, arr",
    "null",
    "0",
    "-1",
    "1e309",
    "NaN",
    "\u0000",
    "😀",
    "a".repeat(5_000),
    "00000000-0000-4000-8000-000000000000",
    "' OR 1=1 --",
    "<script>",
  ),
);
const junkJson = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.record(
    {
      awb: junkText,
      callback: junkText,
      states: fc.oneof(junkText, fc.array(junkText, { maxLength: 4 })),
      state: junkText,
      stationCodes: fc.array(junkText, { maxLength: 120 }),
      timestamp: junkText,
      eventId: junkText,
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom(
    { __proto__: { admin: true } },
    JSON.parse('{"__proto__": {"x": 1}}'),
    { constructor: { prototype: { x: 1 } } },
    { awb: "020-12345675", callback: "http://169.254.169.254/latest", states: "*" },
    { awb: "020-12345675", callback: "http://127.0.0.1:1/ok", states: "*" },
  ),
  fc.array(fc.record({ awb: junkText, state: junkText }, { requiredKeys: [] }), { maxLength: 1_100 }),
);
const rawBody = fc.oneof(
  junkJson.map((v) => JSON.stringify(v)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    "{",
    "[1,2",
    '{"a":}',
    "\u0000\u0001",
    '{"awb":"020-12345675"',
    "null",
    "[]",
    '"x"',
    `{"a":${"[".repeat(5_000)}`,
    '{"__proto__":{"polluted":1}}',
  ),
);
const contentType = fc.constantFrom(
  "application/json",
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/json; charset=latin1",
  "",
  "multipart/form-data; boundary=x",
);
const authorization = fc.oneof(
  fc.constant(`Bearer ${ADMIN_KEY}`),
  fc.constant(`Bearer ${ADMIN_KEY}`),
  fc.constant(undefined),
  junkText.map((t) => `Bearer ${t}`),
  junkText,
);

type Route = { method: string; path: (segment: string) => string; body: boolean };
const c = "/carrier";
const ROUTES: Route[] = [
  { method: "POST", path: () => `${c}/handling/shipment/subscribe`, body: true },
  { method: "GET", path: (s) => `${c}/handling/shipment/subscribe?awb=${s}&callback=${s}`, body: false },
  { method: "GET", path: (s) => `${c}/handling/shipment/subscribe/${s}`, body: false },
  { method: "PUT", path: (s) => `${c}/handling/shipment/subscribe/${s}`, body: true },
  { method: "DELETE", path: (s) => `${c}/handling/shipment/subscribe/${s}`, body: false },
  {
    method: "GET",
    path: (s) => `${c}/handling/shipment/subscribe/${s}/deliveries?status=${s}&first=${s}`,
    body: false,
  },
  { method: "POST", path: (s) => `${c}/handling/shipment/subscribe/${s}/redeliver?from=${s}`, body: true },
  { method: "POST", path: (s) => `${c}/handling/shipment/deliveries/${s}/redeliver`, body: true },
  { method: "POST", path: () => `${c}/handling/shipment/events`, body: true },
  { method: "GET", path: (s) => `${c}/handling/shipment/events?awb=${s}`, body: false },
  { method: "GET", path: () => `${c}/stations/stationcodes`, body: false },
  { method: "POST", path: () => `${c}/stations/station`, body: true },
  { method: "GET", path: (s) => `${c}/stations/station/${s}`, body: false },
  { method: "GET", path: (s) => `${c}/stations/products/${s}`, body: false },
  { method: "GET", path: (s) => `/assets/${s}`, body: false },
  { method: "GET", path: (s) => `/${s}`, body: false },
  { method: "PATCH", path: (s) => `${c}/handling/shipment/subscribe/${s}`, body: true },
];

// ---- checks ---------------------------------------------------------------------------------------
function record(status: number) {
  counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1);
}

async function send(url: string, init: RequestInit): Promise<{ status: number; type: string; text: string }> {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(10_000) });
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

/** JSON, or what the text was when it is not JSON (so that the assertion shows it). */
function parsed(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return { notJson: text.slice(0, 200) };
  }
}

/**
 * Exactly one assertion per answer (the tests count them): never a 5xx, and a 4xx is a problem+json
 * whose status is the answer's and whose code is in the error table.
 */
function expectProblem(answer: { status: number; type: string; text: string }, what: string) {
  record(answer.status);
  const clientError = answer.status >= 400 && answer.status < 500;
  const problem = clientError ? parsed(answer.text) : undefined;
  expect({
    what,
    below500: answer.status < 500,
    problem: clientError
      ? { type: answer.type, status: problem.status, known: CODES.has(problem.code), title: typeof problem.title }
      : undefined,
  }).toEqual({
    what,
    below500: true,
    problem: clientError
      ? { type: "application/problem+json; charset=utf-8", status: answer.status, known: true, title: "string" }
      : undefined,
  });
}

describe("fuzzing with malformed input", () => {
  const disposers = new Disposers();
  let url: string;
  let subscriptionId: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, {
      RATE_LIMIT_PER_SECOND: "0",
      LIVE_MAX_CONNECTIONS_PER_KEY: "1000",
    }));
    // A real subscription, so that routes taking an existing id are fuzzed past their 404.
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const created = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: "020-12345675", callback: `${receiver.url}/ok/fuzz`, states: "*" },
      { authorization: `Bearer ${ADMIN_KEY}` },
    );
    // Thrown, not asserted: an assertion here would count in the first test's expect.assertions.
    if (created.status !== 201) throw new Error(`setup: subscribing answered ${created.status}`);
    subscriptionId = created.body.subscriptionId;
  });
  afterAll(async () => {
    await disposers.disposeAll();
    console.log(
      `fuzz: ${counts.rest} REST requests, ${counts.graphql} GraphQL requests, ${counts.websocketMessages} websocket messages — 0 5xx, 0 hung, 0 malformed answers; statuses ${JSON.stringify(Object.fromEntries([...counts.statuses].sort((a, b) => a[0] - b[0])))}`,
    );
  });

  test(`REST: ${RUNS.rest} malformed requests across every route`, async () => {
    expect.assertions(RUNS.rest); // one per request: every run reached its check
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.oneof(junkText, fc.constant("SUBSCRIPTION")),
        rawBody,
        contentType,
        authorization,
        async (route, segment, body, type, auth) => {
          const value = segment === "SUBSCRIPTION" ? subscriptionId : encodeURIComponent(segment).slice(0, 2_000);
          const headers: Record<string, string> = {};
          if (auth !== undefined) headers.authorization = auth.replace(/[^\t\x20-\x7e]/g, "");
          if (route.body && type) headers["content-type"] = type;
          counts.rest++;
          const answer = await send(`${url}${route.path(value)}`, {
            method: route.method,
            headers,
            ...(route.body ? { body } : {}),
          });
          expectProblem(answer, `${route.method} ${route.path(value).slice(0, 80)}`);
        },
      ),
      { numRuns: RUNS.rest, seed: 20261121 },
    );
  }, 600_000);

  test(`GraphQL over HTTP: ${RUNS.graphql} malformed operations`, async () => {
    const field = fc.constantFrom(
      "station",
      "stations",
      "stationCodes",
      "subscription",
      "subscriptions",
      "milestones",
      "deliveries",
      "health",
      "clients",
      "createSubscription",
      "updateSubscription",
      "deleteSubscription",
      "recordStatusEvents",
      "redeliver",
      "issueApiKey",
      "importStations",
      "__schema",
      "__type",
      "nope",
    );
    const argument = fc.tuple(
      fc.constantFrom(
        "code",
        "codes",
        "id",
        "awb",
        "first",
        "after",
        "input",
        "events",
        "stations",
        "subscriptionId",
        "x",
      ),
      fc.oneof(
        junkText.map((t) => JSON.stringify(t)),
        fc.integer().map(String),
        fc.constantFrom(
          "null",
          "[]",
          "{}",
          "true",
          "$v",
          "ALL",
          '["FRA"]',
          '{ awb: "020-12345675", callback: "x", states: [DEP] }',
        ),
      ),
    );
    const operation = fc.oneof(
      fc
        .tuple(
          fc.constantFrom("query", "mutation", "subscription", ""),
          field,
          fc.array(argument, { maxLength: 3 }),
          fc.constantFrom("code", "awb", "state", "__typename", "items { awb }", "stationCount", "{", ""),
        )
        .map(
          ([kind, name, args, selection]) =>
            `${kind} { ${name}${args.length ? `(${args.map(([k, v]) => `${k}: ${v}`).join(", ")})` : ""} ${selection ? `{ ${selection} }` : ""} }`,
        ),
      fc.string({ maxLength: 200 }),
      fc.constantFrom(
        "{",
        "query { station(code: ",
        "{ a: b: c }",
        "query q($v: [String!]!) { stations(codes: $v) { code } }",
        `{ ${'station(code: "FRA") { code } '.repeat(40)} }`,
        `{ ${"a: __typename ".repeat(50)} }`,
        "fragment F on Query { ...F } { ...F }",
      ),
    );
    const body = fc.oneof(
      fc
        .record(
          {
            query: operation,
            variables: fc.oneof(
              fc.constant(undefined),
              fc.jsonValue({ maxDepth: 3 }),
              fc.record({ v: fc.oneof(fc.array(junkText, { maxLength: 2_000 }), junkText) }),
            ),
            operationName: fc.oneof(fc.constant(undefined), junkText),
          },
          { requiredKeys: ["query"] },
        )
        .map((v) => JSON.stringify(v)),
      fc.array(fc.record({ query: operation }), { maxLength: 15 }).map((v) => JSON.stringify(v)),
      rawBody,
    );
    expect.assertions(RUNS.graphql); // one per request: every run reached its check
    await fc.assert(
      fc.asyncProperty(
        body,
        authorization,
        fc.constantFrom("application/json", "application/graphql-response+json", "*/*"),
        async (payload, auth, accept) => {
          counts.graphql++;
          const headers: Record<string, string> = { "content-type": "application/json", accept };
          if (auth !== undefined) headers.authorization = auth.replace(/[^\t\x20-\x7e]/g, "");
          const answer = await send(`${url}/graphql`, { method: "POST", headers, body: payload });
          record(answer.status);
          const json = parsed(answer.text);
          // Refused before GraphQL (a body that is not JSON, for example): the REST error shape.
          const problem = answer.type.startsWith("application/problem+json");
          const results: any[] = problem ? [] : Array.isArray(json) ? json : [json];
          // One assertion per request: below 500; a refusal is a known problem; every GraphQL result has
          // data, or errors each with a message and a known code.
          expect({
            payload: payload.slice(0, 120),
            below500: answer.status < 500,
            problem: problem ? { known: CODES.has(json.code), status: json.status } : undefined,
            results: results.map((result) =>
              result?.errors === undefined
                ? { hasData: typeof result === "object" && result !== null && "data" in result }
                : result.errors.map((error: { message?: unknown; extensions?: { code?: string } }) => ({
                    message: typeof error.message,
                    known: CODES.has(error.extensions?.code),
                  })),
            ),
          }).toEqual({
            payload: payload.slice(0, 120),
            below500: true,
            problem: problem ? { known: true, status: answer.status } : undefined,
            results: results.map((result) =>
              result?.errors === undefined
                ? { hasData: true }
                : result.errors.map(() => ({ message: "string", known: true })),
            ),
          });
        },
      ),
      { numRuns: RUNS.graphql, seed: 20261122 },
    );
  }, 600_000);

  test(`websocket: every message type, malformed, over ${RUNS.websocket} connections`, async () => {
    const message = fc.oneof(
      fc
        .record(
          {
            type: fc.constantFrom(
              "connection_init",
              "subscribe",
              "complete",
              "ping",
              "pong",
              "next",
              "error",
              "connection_ack",
              "nope",
            ),
            id: fc.oneof(junkText, fc.integer(), fc.constant(undefined)),
            payload: fc.oneof(
              fc.jsonValue({ maxDepth: 3 }),
              fc.record(
                {
                  query: fc.oneof(
                    junkText,
                    fc.constant('subscription { awbStatusChanged(awb: "020-12345675") { state } }'),
                    fc.constant("{ stationCodes }"),
                  ),
                  variables: fc.jsonValue({ maxDepth: 2 }),
                },
                { requiredKeys: [] },
              ),
            ),
          },
          { requiredKeys: ["type"] },
        )
        .map((m) => JSON.stringify(m)),
      fc.string({ maxLength: 100 }),
      fc.constantFrom(
        "{",
        "[]",
        "null",
        '{"type":"subscribe","id":"1","payload":{"query":"subscription { awbStatusChanged(awb: \\"x\\") { state } }"}}',
      ),
    );
    const session = fc.record({
      init: fc.oneof(fc.constant(true), fc.boolean()),
      messages: fc.array(message, { minLength: 1, maxLength: 8 }),
      protocol: fc.constantFrom("graphql-transport-ws", "graphql-transport-ws", "graphql-ws", ""),
    });
    expect.assertions(RUNS.websocket); // one per connection: every run reached its check
    await fc.assert(
      fc.asyncProperty(session, async ({ init, messages, protocol }) => {
        const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, protocol ? [protocol] : []);
        const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
        socket.on("error", () => {});
        const opened = await Promise.race([
          new Promise<boolean>((resolve) => socket.once("open", () => resolve(true))),
          closed.then(() => false),
        ]);
        if (opened) {
          if (init)
            socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: `Bearer ${ADMIN_KEY}` } }));
          for (const text of messages) {
            counts.websocketMessages++;
            if (socket.readyState === WebSocket.OPEN) socket.send(text);
          }
          await new Promise((r) => setTimeout(r, 20));
          socket.close(1000);
        }
        // Bounded, and the bound's timer cleared: a run's timer left behind holds the Jest worker past its exit.
        let bound: NodeJS.Timeout | undefined;
        const code = await Promise.race([
          closed,
          new Promise<number>((resolve) => (bound = setTimeout(() => resolve(-1), 5_000))),
        ]).finally(() => clearTimeout(bound));
        // Closed by us (1000/1005), for a protocol error in what we sent (1002), or by the server with a
        // client-error close code (4400–4499: 4500 would mean the server failed) — never left hanging.
        // 1006 (no close frame) only where the client itself gave up the handshake: it asked for a
        // subprotocol the server does not speak and got none back.
        const clientRefusedHandshake = !opened && protocol !== "graphql-transport-ws" && protocol !== "";
        expect({
          messages,
          protocol,
          code,
          ok:
            code === 1000 ||
            code === 1005 ||
            code === 1002 ||
            (code >= 4400 && code < 4500) ||
            (code === 1006 && clientRefusedHandshake),
        }).toMatchObject({ ok: true });
      }),
      { numRuns: RUNS.websocket, seed: 20261123 },
    );
  }, 600_000);

  test("the server is healthy afterwards and still serves real requests", async () => {
    expect((await send(`${url}/readyz`, {})).status).toBe(200);
    const valid = await postJson(
      `${url}/carrier/handling/shipment/events`,
      { awb: "020-12345675", state: "DEP" },
      { authorization: `Bearer ${ADMIN_KEY}` },
    );
    expect(valid.status).toBe(202);
    expect(counts.rest + counts.graphql + counts.websocketMessages).toBeGreaterThanOrEqual(runsInSuite(10_000));
  });
});
