import { randomUUID } from "node:crypto";
import { createPubSub } from "@graphql-yoga/subscription";
import { execute, type ExecutionResult, type GraphQLSchema, parse, specifiedRules, validate } from "graphql";
import { createClient } from "graphql-ws";
import WebSocket from "ws";
import type { App } from "../src/app";
import { createDeliveryCountsLoader } from "../src/delivery/delivery.loaders";
import { AppError } from "../src/errors";
import {
  compiledExecutionTotals,
  compiledExecutorFor,
  MAX_CACHED_FIELDS,
  MAX_COMPILED_FIELDS,
  MAX_COMPILED_OPERATIONS,
  MAX_SEEN_ONCE,
} from "../src/graphql-core/compiled-executor";
import type { GraphQLContext } from "../src/graphql-core/context";
import { depthLimit } from "../src/graphql-core/depth-limit";
import { formatGraphQLError } from "../src/graphql-core/errors";
import { buildGatewaySchema } from "../src/graphql/schema";
import { type Deadline, endDeadline, startDeadline } from "../src/graphql-core/time-limit";
import { authenticate } from "../src/http/auth";
import { createRateLimiter } from "../src/http/rate-limit";
import type { StationView } from "../src/stations/station.snapshot";
import { ADMIN_KEY, Disposers, silentLogger, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/**
 * Queries run compiled by graphql-jit (src/graphql-core/compiled-executor.ts) answer exactly as graphql-js
 * did: compared field by field and error by error with graphql's `execute` on the real schema and
 * services, and checked over HTTP and the websocket of the real app.
 */

const AUTH = `Bearer ${ADMIN_KEY}`;
const AWB = "020-12345675";
const AT = "2026-01-05T10:00:00.000Z";

/**
 * Station codes that answer a doctored copy of FRA, to fail where the real data never does: a field
 * throwing an AppError deep in a selection, nulls in non-null fields, a list that is not one, a
 * resolver throwing, a slow lookup. Other codes reach the real station service.
 */
let onImportRead: (() => void) | undefined;
function trapStations(app: App): void {
  const stations = app.services.stations;
  const find = stations.find.bind(stations);
  const fra = find("FRA")!;
  const traps: Record<string, (view: StationView) => StationView> = {
    ZZA: (view) => ({
      ...view,
      import: {
        ...view.import,
        get address(): never {
          throw new AppError("VALIDATION_FAILED", "trap: the import address is unreadable");
        },
      },
    }),
    ZZB: (view) => ({
      ...view,
      export: {
        ...view.export,
        openingHours: [{ day: null, hours: [] } as never, ...(view.export.openingHours ?? [])],
      },
    }),
    ZZC: (view) => ({ ...view, name: null as never }),
    ZZD: (view) => ({ ...view, import: { ...view.import, openingHours: 5 as never } }),
    ZZE: (view) => ({ ...view, timeZone: "Nowhere/Atlantis" }),
    SLO: (view) => {
      const until = performance.now() + 150;
      while (performance.now() < until); // a lookup slower than the time limit of the app that uses it
      return view;
    },
    // The deadline passes as the import details are read, before their fields (plain properties).
    TMO: (view) => ({
      ...view,
      get import() {
        onImportRead?.();
        return view.import;
      },
    }),
  };
  jest.spyOn(stations, "find").mockImplementation((code, field) => {
    const trap = typeof code === "string" ? traps[code] : undefined;
    return trap ? { ...fra, view: trap(fra.view) } : find(code, field);
  });
}

const STATION_FIELDS = `code name countryShort countryLong timeZone freighterHandling passengerAircraftHandling truckHandling
  import { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone }
    firmsCode ciscFee storage externalComment openingHours { day hours { open close } } }
  export { address { street city } contact { generalPhone } openingHours { day hours { open close } } }
  temperatureProducts { code active { available temperatureRanges { min max } containerTypes services contact { email phone } comment }
    passive { available comment } }`;

const MIXED = `query Mixed($withContact: Boolean!, $skipName: Boolean = false, $code: String = "FRA") {
  __typename
  a: station(code: $code) { ...Core ... on Station { tz: timeZone } import { ... @include(if: $withContact) { contact { generalPhone } } } }
  b: station(code: "AMS") { __typename ...Core name @skip(if: $skipName) n: name @include(if: $skipName) }
}
fragment Core on Station { code name __typename export { __typename openingHours { day } } }`;

const OPERATIONS = `query A { stationCodes }
query B { station(code: "FRA") { code } }
query C($code: String!) { station(code: $code) { name } }`;

interface Case {
  name: string;
  query: string;
  variables?: Record<string, unknown>;
  operationName?: string;
  authorization?: string;
}

const CASES: Case[] = [
  { name: "every field of two stations", query: `{ stations(codes: ["FRA", "AMS"]) { ${STATION_FIELDS} } }` },
  { name: "every station", query: `{ stations { code name openAt(at: "${AT}") import { openingHours { day } } } }` },
  { name: "station codes", query: "{ stationCodes }" },
  { name: "unknown codes are null items", query: `{ stations(codes: ["FRA", "QQQ", "FRA"]) { code } }` },
  { name: "aliases, fragments, @include", query: MIXED, variables: { withContact: true } },
  {
    name: "@skip, defaults overridden",
    query: MIXED,
    variables: { withContact: false, skipName: true, code: "LHR" },
  },
  {
    name: "clock fields pinned by variables",
    query: `query($at: DateTimeISO, $side: StationSide!) { station(code: "FRA") { openAt(at: $at, side: $side) exportOpen: openAt(at: $at) } }`,
    variables: { at: AT, side: "IMPORT" },
  },
  {
    name: "a list variable given one value",
    query: "query($c: [String!]) { stations(codes: $c) { code } }",
    variables: { c: "FRA" },
  },
  {
    name: "a missing required variable",
    query: "query($code: String!) { station(code: $code) { code } }",
    variables: {},
  },
  {
    name: "a variable of the wrong type",
    query: "query($code: String!) { station(code: $code) { code } }",
    variables: { code: 5 },
  },
  {
    name: "null for a non-null variable",
    query: "query($code: String!) { station(code: $code) { code } }",
    variables: { code: null },
  },
  {
    name: "an unknown enum value",
    query: `query($side: StationSide!) { station(code: "FRA") { openAt(side: $side, at: "${AT}") } }`,
    variables: { side: "SIDEWAYS" },
  },
  {
    name: "a malformed date",
    query: `query($at: DateTimeISO) { station(code: "FRA") { openAt(at: $at) } }`,
    variables: { at: "yesterday" },
  },
  {
    name: "a string for an Int",
    query: "query($first: Int!) { subscriptions(first: $first) { nextCursor } }",
    variables: { first: "10" },
    authorization: AUTH,
  },
  {
    name: "a date variable's default (graphql-jit would pass it on as a string)",
    query: `query($at: DateTimeISO = "${AT}") { station(code: "FRA") { openAt(at: $at) } }`,
  },
  {
    name: "a non-null variable's default",
    query: `query($code: String! = "AMS") { station(code: $code) { code } }`,
  },
  {
    name: "enum and Int defaults",
    query: `query($side: StationSide = IMPORT, $first: Int = 2) { station(code: "FRA") { openAt(side: $side, at: "${AT}") }
      subscriptions(first: $first) { nextCursor } }`,
    authorization: AUTH,
  },
  {
    name: "an unknown variable is ignored",
    query: "query($code: String!) { station(code: $code) { code } }",
    variables: { code: "FRA", extra: 1 },
  },
  { name: "operation A of three", query: OPERATIONS, operationName: "A" },
  { name: "operation C of three, with variables", query: OPERATIONS, operationName: "C", variables: { code: "AMS" } },
  { name: "no operation name among three", query: OPERATIONS },
  { name: "an unknown operation name", query: OPERATIONS, operationName: "Z" },
  { name: "an empty operation name", query: "query B { stationCodes }", operationName: "" },
  { name: "a named operation without its name", query: "query B { stationCodes }" },
  { name: "an AppError in a non-null root field", query: `{ stations(codes: ["!!"]) { code } }` },
  { name: "an AppError in a nullable root field, beside data", query: `{ station(code: "!!") { code } stationCodes }` },
  {
    name: "two errors, the non-null one first",
    query: `{ stations(codes: ["!!"]) { code } station(code: "??") { code } }`,
  },
  {
    name: "two errors, the nullable one first",
    query: `{ station(code: "??") { code } stationCodes stations(codes: ["!!"]) { code } }`,
  },
  {
    name: "an AppError deep in a nullable field",
    query: `{ station(code: "ZZA") { code import { address { city } ciscFee } } }`,
  },
  {
    name: "null in a non-null field inside a list",
    query: `{ station(code: "ZZB") { code export { openingHours { day hours { open } } } } }`,
  },
  {
    name: "null in a non-null field, up to the nearest nullable parent",
    query: `{ station(code: "ZZC") { code name } other: station(code: "FRA") { code } }`,
  },
  { name: "null in a field selected twice", query: `{ station(code: "ZZC") { name name } }` },
  { name: "not a list where one is expected", query: `{ station(code: "ZZD") { import { openingHours { day } } } }` },
  { name: "a resolver throwing an internal error", query: `{ station(code: "ZZE") { code openAt } }` },
  {
    name: "several errors in one station",
    query: `{ a: station(code: "ZZA") { import { address { city } } } c: station(code: "ZZC") { openAt name code } }`,
  },
  { name: "unauthenticated", query: "{ subscriptions { items { awb } } }" },
  {
    name: "subscriptions with their delivery counts (batched, asynchronous)",
    query: `{ subscriptions(first: 5) { items { awb states checkDigitValid createdAt deliveryCounts { pending delivered dead } } nextCursor }
      clients { name maxSubscriptions keys { scopes label revokedAt } } }`,
    authorization: AUTH,
  },
  {
    name: "milestones",
    query: `{ milestones(awb: "${AWB}") { awb state sequence timestamp receivedAt station flight } }`,
    authorization: AUTH,
  },
  { name: "a malformed AWB", query: `{ milestones(awb: "nope") { awb } }`, authorization: AUTH },
  { name: "health", query: "{ health { status database databaseKind migrationsApplied redis } }" },
  {
    name: "introspection",
    query: `{ __schema { queryType { name } types { name kind } } __type(name: "Station") { name fields { name args { name defaultValue } } } }`,
  },
  {
    name: "a mutation refused",
    query: `mutation { createSubscription(input: { awb: "bad", callback: "http://127.0.0.1/x", states: [DEP] }) { subscriptionId } }`,
    authorization: AUTH,
  },
];

/** What a result shows to a client: its keys in order, its data, and each error as Apollo would format it. */
function shown(result: ExecutionResult) {
  return {
    json: JSON.stringify(result),
    keys: Object.keys(result),
    data: result.data,
    errors: result.errors?.map((e) => ({
      ...e.toJSON(),
      original: e.originalError?.constructor.name,
      formatted: formatGraphQLError(
        { ...e.toJSON(), extensions: { ...e.extensions, code: e.extensions.code ?? "INTERNAL_SERVER_ERROR" } },
        e,
      ),
    })),
  };
}

describe("compiled queries on the real schema and services", () => {
  const disposers = new Disposers();
  let app: App;
  let schema: GraphQLSchema;
  const limiter = createRateLimiter({ perSecond: 0, burst: 0 });
  beforeAll(async () => {
    ({ app } = await startApp("pglite", disposers, { GRAPHQL_RESPONSE_CACHE: "false", RATE_LIMIT_PER_SECOND: "0" }));
    trapStations(app);
    // Something for the subscriptions and milestones to show.
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const url = app.url();
    const subscribed = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: AWB, callback: `${receiver.url}/ok/compiled`, states: "DEP,ARR" },
      { authorization: AUTH },
    );
    expect(subscribed.status).toBe(201);
    const ingested = await postJson(
      `${url}/carrier/handling/shipment/events`,
      { awb: AWB, state: "DEP", timestamp: AT, station: "FRA", flight: "LH400" },
      { authorization: AUTH },
    );
    expect(ingested.status).toBeLessThan(300);
    // Settled before the executors compare answers: its delivery recorded, not still pending.
    await until(async () => (await app.database.prisma.delivery.count({ where: { status: "DELIVERED" } })) === 1, {
      what: "the milestone's delivery recorded",
    });
    schema = await buildGatewaySchema(createPubSub());
  });
  afterAll(() => disposers.disposeAll());

  /** A context as the app makes one per request. */
  function contextFor(authorization?: string): GraphQLContext {
    let principal: ReturnType<typeof authenticate> | undefined;
    let loaders: GraphQLContext["loaders"] | undefined;
    return {
      requestId: "compiled-test",
      log: silentLogger,
      services: app.services,
      auth: () => (principal ??= authenticate(authorization, app.services.clients, limiter)),
      get loaders() {
        return (loaders ??= { deliveryCounts: createDeliveryCountsLoader(app.database.prisma) });
      },
    };
  }

  it.each(CASES)("$name: the compiled executor answers as graphql-js", async (c) => {
    const executor = compiledExecutorFor(schema); // also puts the deadline check on every field, for both
    const document = parse(c.query);
    // As Apollo: only valid documents are executed.
    expect(validate(schema, document, [...specifiedRules, depthLimit(12)])).toEqual([]);
    const args = () => ({
      schema,
      document,
      variableValues: c.variables,
      operationName: c.operationName,
      contextValue: contextFor(c.authorization),
    });
    const expected = shown(await execute(args()));
    // Seen once (graphql-js), seen again (compiled, where it compiles), then from the cache.
    for (let i = 0; i < 3; i++) expect(shown(await executor.execute(args(), c.query))).toEqual(expected);
  });

  it("runs a text on graphql-js when first seen and compiles it when seen again, once, keyed by text and operation", async () => {
    const executor = compiledExecutorFor(schema);
    const query = `query Repeated { station(code: "AMS") { code timeZone } }`;
    const run = async (text: string, operationName?: string) =>
      executor.execute({ schema, document: parse(text), operationName, contextValue: contextFor() }, text);
    const answer = { station: { code: "AMS", timeZone: "Europe/Amsterdam" } };
    const before = executor.stats();
    const totals = compiledExecutionTotals();

    expect((await run(query)).data).toEqual(answer);
    expect(executor.stats()).toEqual({ ...before, seenOnce: before.seenOnce + 1 });
    expect(compiledExecutionTotals()).toEqual(totals);

    expect((await run(query)).data).toEqual(answer);
    expect(executor.stats()).toEqual({
      size: before.size + 1,
      fields: before.fields + 3,
      compilations: before.compilations + 1,
      seenOnce: before.seenOnce,
    });
    expect(compiledExecutionTotals()).toEqual({
      compilations: totals.compilations + 1,
      compiledAnswers: totals.compiledAnswers + 1,
    });

    for (let i = 0; i < 3; i++) expect((await run(query)).data).toEqual(answer);
    await run(query, "Repeated"); // the same operation, named: the same compiled query
    expect(executor.stats().compilations).toBe(before.compilations + 1);
    expect(compiledExecutionTotals().compiledAnswers).toBe(totals.compiledAnswers + 5);
    await run(`${query} `); // another text: another entry, seen once so far
    expect(executor.stats()).toMatchObject({ compilations: before.compilations + 1, seenOnce: before.seenOnce + 1 });
    await run(`${query} `);
    expect(executor.stats().compilations).toBe(before.compilations + 2);
  });

  it("keeps compiled queries through a flood of texts each sent once, and remembers a bounded number of those", async () => {
    const executor = compiledExecutorFor(schema);
    const run = (text: string) => executor.execute({ schema, document: parse(text), contextValue: contextFor() }, text);
    const query = `query Kept { station(code: "FRA") { code } }`;
    await run(query);
    await run(query);
    const before = executor.stats();
    const totals = compiledExecutionTotals();

    // More one-off texts than either cache holds, as from a client varying only a comment.
    const flood = Math.max(MAX_COMPILED_OPERATIONS, MAX_SEEN_ONCE) + 1;
    const oneOff = (i: number) => `{ stationCodes } # ${i}`;
    for (let i = 0; i < flood; i++) expect((await run(oneOff(i))).errors).toBeUndefined();
    // None compiled, and the compiled query still kept: it answers without compiling again.
    expect((await run(query)).data).toEqual({ station: { code: "FRA" } });
    expect(compiledExecutionTotals()).toEqual({ ...totals, compiledAnswers: totals.compiledAnswers + 1 });
    expect(executor.stats()).toEqual({ ...before, seenOnce: MAX_SEEN_ONCE });
    // The oldest marks made way for the newest: the first text is new again, the last one compiles.
    await run(oneOff(0));
    expect(executor.stats().compilations).toBe(before.compilations);
    await run(oneOff(flood - 1));
    expect(executor.stats().compilations).toBe(before.compilations + 1);
  });

  it("leaves a document selecting more than MAX_COMPILED_FIELDS fields to graphql-js, and remembers that", async () => {
    const executor = compiledExecutorFor(schema);
    // Every field of a station is about 50 fields; 60 of them, fragments expanded, are over 2,000.
    const query = `{ ${Array.from({ length: 60 }, (_, i) => `s${i}: station(code: "FRA") { ...All }`).join(" ")} }
      fragment All on Station { ${STATION_FIELDS} }`;
    const document = parse(query);
    const before = executor.stats();
    const totals = compiledExecutionTotals();
    // Seen once, then seen again (judged too large, and kept as such), then answered from the cache.
    for (let i = 0; i < 3; i++) {
      const answer = await executor.execute({ schema, document, contextValue: contextFor() }, query);
      expect(shown(answer)).toEqual(shown(await execute({ schema, document, contextValue: contextFor() })));
    }
    expect(executor.stats()).toEqual({ ...before, size: before.size + 1 });
    expect(compiledExecutionTotals()).toEqual(totals);
    expect(MAX_COMPILED_FIELDS).toBe(2_000);
  });

  it("keeps at most MAX_CACHED_FIELDS fields' worth of compiled code, least recently used out", async () => {
    const executor = compiledExecutorFor(schema);
    const text = (i: number) =>
      `query Big${i} { ${Array.from({ length: 35 }, (_, j) => `s${j}: station(code: "FRA") { ...All }`).join(" ")} }
      fragment All on Station { ${STATION_FIELDS} }`;
    const run = (query: string) =>
      executor.execute({ schema, document: parse(query), contextValue: contextFor() }, query);
    const compile = async (query: string) => {
      await run(query); // seen once
      await run(query);
    };
    const before = executor.stats();
    await compile(text(0));
    const weight = executor.stats().fields - before.fields;
    expect(weight).toBeGreaterThan(1_000);
    expect(weight).toBeLessThanOrEqual(MAX_COMPILED_FIELDS);
    const more = Math.ceil(MAX_CACHED_FIELDS / weight) + 1;
    for (let i = 1; i <= more; i++) await compile(text(i));
    expect(executor.stats().fields).toBeLessThanOrEqual(MAX_CACHED_FIELDS);
    const compiled = executor.stats().compilations;
    const totals = compiledExecutionTotals();
    await run(text(more)); // the latest is kept
    expect(compiledExecutionTotals()).toEqual({ ...totals, compiledAnswers: totals.compiledAnswers + 1 });
    await compile(text(0)); // the first was dropped, and starts again from seen once
    expect(executor.stats().compilations).toBe(compiled + 1);
  });

  it("checks the deadline at fields without a resolver of their own, as graphql-js does", async () => {
    // The deadline passes as `import` is read: its fields, plain properties without a resolver of their
    // own (ImportDetails has simpleResolvers), must fail, which they do only if their read is wrapped.
    const run = async (executeWith: (args: Parameters<typeof execute>[0]) => unknown) => {
      const contextValue = contextFor();
      const deadline: Deadline = startDeadline(contextValue, 60_000);
      onImportRead = () => (deadline.timedOut = true);
      try {
        return shown((await executeWith({ schema, document: parse(query), contextValue })) as ExecutionResult);
      } finally {
        onImportRead = undefined;
        endDeadline(contextValue);
      }
    };
    const query = `{ station(code: "TMO") { code import { ciscFee } } stationCodes }`;
    const executor = compiledExecutorFor(schema);
    const expected = await run(execute);
    await run((args) => executor.execute(args, query)); // seen once: graphql-js
    const totals = compiledExecutionTotals();
    const compiled = await run((args) => executor.execute(args, query));
    expect(compiled).toEqual(expected);
    expect(compiled.errors?.map((e) => [e.path, e.formatted.extensions?.code])).toEqual([
      [["station", "import", "ciscFee"], "OPERATION_TIMED_OUT"],
    ]);
    expect(compiledExecutionTotals().compiledAnswers).toBe(totals.compiledAnswers + 1);
  });
});

/** The first message (next or error) of an operation over graphql-ws, as JSON. */
function overWebsocket(
  client: ReturnType<typeof createClient>,
  payload: { query: string; variables?: Record<string, unknown>; operationName?: string },
): Promise<unknown> {
  return new Promise((resolve) => {
    const stop = client.subscribe(payload, {
      next: (value) => {
        resolve(value);
        stop();
      },
      error: (error) => resolve({ error }),
      complete: () => resolve("complete"),
    });
  });
}

describe("compiled queries over HTTP and the websocket of the real app", () => {
  const disposers = new Disposers();
  let url: string;
  let client: ReturnType<typeof createClient>;
  beforeAll(async () => {
    let app: App;
    ({ app, url } = await startApp("pglite", disposers, {
      GRAPHQL_RESPONSE_CACHE: "false",
      RATE_LIMIT_PER_SECOND: "0",
    }));
    trapStations(app);
    client = createClient({
      url: `${url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      // One socket for the whole block: a lazy client closes it whenever no operation runs.
      lazy: false,
      connectionParams: { authorization: AUTH },
    });
    disposers.add(() => client.dispose());
  });
  afterAll(() => disposers.disposeAll());

  const post = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    postJson(`${url}/graphql`, body, headers);

  it("answers nested errors with null propagation to the nearest nullable parent", async () => {
    const deep = await post({ query: `{ station(code: "ZZA") { code import { address { city } ciscFee } } }` });
    expect(deep.status).toBe(200);
    expect(deep.headers.get("cache-control")).toBe("no-store");
    expect(deep.body).toEqual({
      errors: [
        {
          message: "trap: the import address is unreadable",
          locations: [{ line: 1, column: 40 }],
          path: ["station", "import", "address"],
          extensions: { code: "VALIDATION_FAILED" },
        },
      ],
      data: { station: { code: "FRA", import: { address: null, ciscFee: null } } },
    });
    const inList = await post({ query: `{ station(code: "ZZB") { code export { openingHours { day } } } }` });
    expect(inList.body).toEqual({
      errors: [
        {
          message: "An unexpected error occurred",
          path: ["station", "export", "openingHours", 0, "day"],
          extensions: { code: "INTERNAL" },
        },
      ],
      data: { station: { code: "FRA", export: { openingHours: null } } },
    });
    const upToStation = await post({
      query: `{ station(code: "ZZC") { code name } other: station(code: "AMS") { code } }`,
    });
    expect(upToStation.body).toEqual({
      errors: [
        { message: "An unexpected error occurred", path: ["station", "name"], extensions: { code: "INTERNAL" } },
      ],
      data: { station: null, other: { code: "AMS" } },
    });
    // The serialised text as graphql-js's result gives it: errors first.
    const raw = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: `{ stations(codes: ["!!"]) { code } }` }),
    });
    expect(await raw.text()).toBe(
      '{"errors":[{"message":"codes[0]: must be three upper-case letters, got \\"!!\\"","locations":[{"line":1,"column":3}],"path":["stations"],"extensions":{"code":"VALIDATION_FAILED","errors":[{"field":"codes[0]","message":"must be three upper-case letters, got \\"!!\\""}]}}],"data":null}\n',
    );
  });

  it("coerces variables, applies defaults and refuses bad ones with 400 as before", async () => {
    const query =
      'query($code: String! = "FRA", $codes: [String!]) { station(code: $code) { code } stations(codes: $codes) { code } }';
    const ok = await post({ query, variables: { codes: "AMS" } });
    expect(ok.body).toEqual({ data: { station: { code: "FRA" }, stations: [{ code: "AMS" }] } });
    const bad = await post({ query, variables: { code: 5 } });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      errors: [
        {
          message: 'Variable "$code" got invalid value 5; String cannot represent a non string value: 5',
          locations: [{ line: 1, column: 7 }],
          extensions: { code: "VALIDATION_FAILED" },
        },
      ],
    });
  });

  it("runs aliases, fragments, @include/@skip, __typename and the operation named", async () => {
    const mixed = await post({ query: MIXED, variables: { withContact: false, skipName: true, code: "LHR" } });
    expect(mixed.body.errors).toBeUndefined();
    expect(mixed.body.data.__typename).toBe("Query");
    expect(Object.keys(mixed.body.data.a)).toEqual(["code", "name", "__typename", "export", "tz", "import"]);
    expect(mixed.body.data.a.import).toEqual({});
    expect(Object.keys(mixed.body.data.b)).toEqual(["__typename", "code", "name", "export", "n"]);
    expect(mixed.body.data.b.export.__typename).toBe("ExportDetails");
    const named = await post({ query: OPERATIONS, operationName: "C", variables: { code: "AMS" } });
    expect(named.body).toEqual({ data: { station: { name: expect.any(String) } } });
    const unnamed = await post({ query: OPERATIONS });
    expect(unnamed.status).toBe(400);
    expect(unnamed.body.errors).toEqual([
      {
        message: "Must provide operation name if query contains multiple operations.",
        extensions: { code: "VALIDATION_FAILED" },
      },
    ]);
  });

  it("compiles a document once for both transports and answers the same over the websocket", async () => {
    const query = `query Shared($code: String!) { station(code: $code) { code name timeZone import { address { city } } } }`;
    const totals = compiledExecutionTotals();
    const overHttp = await post({ query, variables: { code: "FRA" } });
    for (let i = 0; i < 3; i++) expect((await post({ query, variables: { code: "FRA" } })).body).toEqual(overHttp.body);
    expect(await overWebsocket(client, { query, variables: { code: "FRA" } })).toEqual(overHttp.body);
    expect(compiledExecutionTotals().compilations).toBe(totals.compilations + 1);
    // All but the first: seen once, it ran on graphql-js.
    expect(compiledExecutionTotals().compiledAnswers).toBe(totals.compiledAnswers + 4);

    for (const payload of [
      { query: `{ station(code: "ZZA") { code import { address { city } ciscFee } } }` },
      { query: `{ station(code: "ZZC") { code name } other: station(code: "AMS") { code } }` },
      { query: "query($code: String!) { station(code: $code) { code } }", variables: { code: 5 } },
      { query: OPERATIONS, operationName: "A" },
    ])
      expect(await overWebsocket(client, payload)).toEqual((await post(payload)).body);
  });

  it("runs mutations on graphql-js: a mutation field after one that failed and is non-null does not run", async () => {
    // graphql-jit would run `createClient` after `revokeApiKey` failed; graphql-js stops. The answer is
    // the same either way (data null, the one error): the client created or not shows which ran it.
    const name = `never created ${randomUUID()}`;
    const query = `mutation { revokeApiKey(keyId: "${randomUUID()}") createClient(name: "${name}", callbackPrefixes: ["*"]) { clientId } }`;
    // Twice: a query seen a second time would be compiled.
    for (let i = 0; i < 2; i++) {
      const answer = await post({ query }, { authorization: AUTH });
      expect(answer.body).toEqual({
        errors: [
          {
            message: expect.stringMatching(/^No active key /),
            locations: [{ line: 1, column: 12 }],
            path: ["revokeApiKey"],
            extensions: { code: "NOT_FOUND" },
          },
        ],
        data: null,
      });
    }
    const clients = await post({ query: "{ clients { name } }" }, { authorization: AUTH });
    expect(clients.body.data.clients.map((c: { name: string }) => c.name)).not.toContain(name);
  });
});

describe("the time limit and the response cache with compiled queries", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    let app: App;
    ({ app, url } = await startApp("pglite", disposers, { GRAPHQL_TIME_LIMIT_MS: "100" }));
    trapStations(app);
  });
  afterAll(() => disposers.disposeAll());

  it("stops a query that runs past the limit, over HTTP and over the websocket", async () => {
    const query = `{ station(code: "SLO") { code name import { address { city } } } }`;
    const timedOut = {
      errors: [
        { message: "The operation ran longer than its 100 ms limit", extensions: { code: "OPERATION_TIMED_OUT" } },
      ],
    };
    const overHttp = await postJson(`${url}/graphql`, { query });
    expect(overHttp.status).toBe(503);
    expect(overHttp.body).toEqual(timedOut);
    // Again, now seen twice and compiled.
    expect((await postJson(`${url}/graphql`, { query })).body).toEqual(timedOut);
    const client = createClient({
      url: `${url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: AUTH },
    });
    disposers.add(() => client.dispose());
    expect(await overWebsocket(client, { query })).toEqual(timedOut);
  });

  it("keeps serving repeated station reads from the response cache", async () => {
    const query = `{ station(code: "FRA") { code name openAt(at: "${AT}") } }`;
    const first = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    const body = await first.text();
    expect(first.headers.get("x-response-cache")).toBeNull();
    const totals = compiledExecutionTotals();
    const second = await fetch(`${url}/graphql`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query }),
    });
    expect(second.headers.get("x-response-cache")).toBe("hit");
    expect(await second.text()).toBe(body);
    expect(compiledExecutionTotals()).toEqual(totals); // not executed at all
  });
});
