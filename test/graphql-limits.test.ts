import { buildSchema, parse, validate } from "graphql";
import { depthLimit } from "../src/graphql-core/depth-limit";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "graphql-ws";
import { sha256Hex } from "../src/graphql-core/allow-list";
import WebSocket from "ws";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson, postJson } from "./support/http";
import { until } from "./support/webhooks";

/** An introspection query nested exactly `levels` fields deep (the real schema is not that deep). */
function deepQuery(levels: number): string {
  let nested = "name";
  for (let i = 0; i < levels - 3; i++) nested = `ofType { ${nested} }`;
  return `{ __schema { types { ${nested} } } }`;
}

describe("the depth rule on its own", () => {
  // Our schema's data types do not nest past 12; a recursive one shows the data-depth rule at work.
  const schema = buildSchema(`type Query { node: Node } type Node { child: Node name: String }`);
  const nested = (levels: number) =>
    `{ ${"node { ".repeat(1)}${"child { ".repeat(levels - 2)}name${" }".repeat(levels - 1)} }`;
  it("refuses data fields nested deeper than the limit and accepts them at it", () => {
    expect(validate(schema, parse(nested(12)), [depthLimit(12)])).toEqual([]);
    const errors = validate(schema, parse(nested(13)), [depthLimit(12)]);
    expect(errors.map((e) => e.message)).toEqual(["The operation is nested 13 levels deep; at most 12 are allowed"]);
  });
});

describe("GraphQL depth limit", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  // The data types do not nest past the limit; only introspection's type references can, so that is
  // where the depth rules are driven: data fields at most 12, introspection at most 20.
  it("accepts the deepest real station query and introspection up to 20 levels, and refuses one nested deeper", async () => {
    const ok = await postJson(`${url}/graphql`, {
      query: `{ station(code: "FRA") { import { openingHours { hours { open close } } } } }`,
    });
    expect(ok.body.errors).toBeUndefined();
    expect((await postJson(`${url}/graphql`, { query: deepQuery(20) })).body.errors).toBeUndefined();
    const deep = await postJson(`${url}/graphql`, { query: deepQuery(21) });
    expect(deep.body.data).toBeUndefined();
    expect(deep.body.errors[0].extensions).toEqual({ code: "QUERY_TOO_COMPLEX" });
    expect(deep.body.errors[0].message).toContain("at most 20");
  });

  it("applies the same limit over websockets", async () => {
    const client = createClient({
      url: `${url.replace("http", "ws")}/graphql`,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      connectionParams: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    disposers.add(() => client.dispose());
    const errors = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: deepQuery(21) },
        { next: () => {}, error: resolve, complete: () => resolve(undefined) },
      );
    });
    expect(JSON.stringify(errors)).toContain("QUERY_TOO_COMPLEX");
  });
});

const STATION_EVERYTHING = `code name countryShort countryLong timeZone freighterHandling passengerAircraftHandling truckHandling
  import { address { street city } contact { generalPhone } openingHours { day hours { open close } } ciscFee storage }
  export { address { street city } openingHours { day hours { open close } } }
  temperatureProducts { active { available temperatureRanges { min max } services } passive { available } }`;

function wsClient(url: string, disposers: Disposers) {
  const client = createClient({
    url: `${url.replace("http", "ws")}/graphql`,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    connectionParams: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  disposers.add(() => client.dispose());
  return client;
}

/** The first result or error of an operation over graphql-ws. */
function overWebsocket(
  client: ReturnType<typeof createClient>,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<string> {
  return new Promise((resolve) => {
    const stop = client.subscribe(
      { query, variables },
      {
        next: (value) => {
          resolve(JSON.stringify(value));
          stop();
        },
        error: (error) => resolve(JSON.stringify(error)),
        complete: () => resolve("complete"),
      },
    );
  });
}

describe("GraphQL cost, alias, list, batch and time limits", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, {
      GRAPHQL_MAX_COST: "5000",
      GRAPHQL_RESPONSE_CACHE: "false",
      RATE_LIMIT_PER_SECOND: "0",
    }));
  });
  afterAll(() => disposers.disposeAll());

  it("refuses an operation whose cost (lists counted by size, from literals or variables) is over the limit", async () => {
    const query = `query($codes: [String!]) { stations(codes: $codes) { ${STATION_EVERYTHING} } }`;
    const few = await postJson(`${url}/graphql`, { query, variables: { codes: ["FRA", "AMS"] } });
    expect(few.body.errors).toBeUndefined();
    expect(few.body.data.stations).toHaveLength(2);
    // Every station (no codes): 500 assumed × the fields above is far over 5,000.
    const all = await postJson(`${url}/graphql`, { query, variables: {} });
    expect(all.status).toBe(400);
    expect(all.body.data).toBeUndefined();
    expect(all.body.errors[0].extensions).toEqual({ code: "QUERY_TOO_COMPLEX" });
    expect(all.body.errors[0].message).toMatch(/would cost \d+ .*at most 5000/);
  });

  it("refuses more than 30 aliases and list arguments over 1,000 items", async () => {
    const aliased = (n: number) =>
      `{ ${Array.from({ length: n }, (_, i) => `s${i}: station(code: "FRA") { code }`).join(" ")} }`;
    expect((await postJson(`${url}/graphql`, { query: aliased(30) })).body.errors).toBeUndefined();
    const tooMany = await postJson(`${url}/graphql`, { query: aliased(31) });
    expect(tooMany.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
    expect(tooMany.body.errors[0].message).toContain("31 aliases");

    const codes = Array.from({ length: 1_001 }, () => "FRA");
    const long = await postJson(`${url}/graphql`, {
      query: "query($codes: [String!]) { stations(codes: $codes) { code } }",
      variables: { codes },
    });
    expect(long.body.errors[0].extensions.code).toBe("QUERY_TOO_COMPLEX");
    expect(long.body.errors[0].message).toContain("has 1001 items; at most 1000");
  });

  it("runs batches of up to 10 operations and refuses bigger ones before running any", async () => {
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        query: `{ station(code: "FRA") { code } }`,
        operationName: null,
        variables: { i },
      }));
    // With a key: without one, a request holds one operation (test/graphql-anonymous-output.test.ts).
    const key = { authorization: `Bearer ${ADMIN_KEY}` };
    const ok = await postJson(`${url}/graphql`, batch(10), key);
    expect(ok.status).toBe(200);
    expect(ok.body).toHaveLength(10);
    expect(ok.body.every((r: any) => r.data.station.code === "FRA")).toBe(true);
    const big = await postJson(`${url}/graphql`, batch(11), key);
    expect(big.status).toBe(400);
    expect(big.body.errors[0]).toEqual({
      message: "A batch may hold at most 10 operations; this one has 11",
      extensions: { code: "QUERY_TOO_COMPLEX" },
    });
  });

  it("applies the cost, alias and list limits over websockets too", async () => {
    const client = wsClient(url, disposers);
    const aliases = Array.from({ length: 31 }, (_, i) => `a${i}: awbStatusChanged(awb: "020-12345675") { state }`).join(
      " ",
    );
    expect(await overWebsocket(client, `subscription { ${aliases} }`)).toContain("QUERY_TOO_COMPLEX");
    const awbs = Array.from({ length: 1_001 }, () => "020-12345675");
    expect(
      await overWebsocket(client, "subscription($awbs: [String!]!) { statusEvents(awbs: $awbs) { state } }", { awbs }),
    ).toContain("at most 1000");
  });
});

describe("GraphQL time limit, introspection switch and allow-listed operations", () => {
  const disposers = new Disposers();
  // Each test starts its own gateways: stopped when it ends, their databases go back to the pool.
  afterEach(() => disposers.disposeAll());

  it("stops a query that runs past its time limit and answers one OPERATION_TIMED_OUT error", async () => {
    const { url } = await startApp("pglite", disposers, {
      GRAPHQL_TIME_LIMIT_MS: "1",
      GRAPHQL_RESPONSE_CACHE: "false",
    });
    // With a key: every field of every station costs more than a request without one may.
    const slow = await postJson(
      `${url}/graphql`,
      { query: `{ stations { ${STATION_EVERYTHING} } }` },
      { authorization: `Bearer ${ADMIN_KEY}` },
    );
    expect(slow.status).toBe(503);
    expect(slow.body).toEqual({
      errors: [
        { message: "The operation ran longer than its 1 ms limit", extensions: { code: "OPERATION_TIMED_OUT" } },
      ],
    });
    const health = await getJson(`${url}/readyz`);
    expect(health.status).toBe(200);
  });

  it("refuses introspection over HTTP and websockets when GRAPHQL_INTROSPECTION=false, and serves the rest", async () => {
    const { url } = await startApp("pglite", disposers, { GRAPHQL_INTROSPECTION: "false" });
    const introspect = await postJson(`${url}/graphql`, { query: "{ __schema { types { name } } }" });
    expect(introspect.body.errors[0].message).toContain("introspection");
    expect(
      (await postJson(`${url}/graphql`, { query: '{ station(code: "FRA") { code } }' })).body.data.station.code,
    ).toBe("FRA");
    // A query over the websocket: with introspection on, this returns data.
    expect(await overWebsocket(wsClient(url, disposers), "query { __schema { queryType { name } } }")).toContain(
      "GraphQL introspection has been disabled",
    );
  });

  it("suggests no names in its errors when GRAPHQL_INTROSPECTION=false, over HTTP and websockets", async () => {
    const typo = '{ station(code: "FRA") { nme } }';
    const badEnum = {
      query: 'query($side: StationSide!) { station(code: "FRA") { openAt(side: $side) } }',
      variables: { side: "EXPORTS" },
    };
    const open = await startApp("pglite", disposers);
    const suggested = await postJson(`${open.url}/graphql`, { query: typo });
    expect(suggested.body.errors[0].message).toBe('Cannot query field "nme" on type "Station". Did you mean "name"?');
    expect((await postJson(`${open.url}/graphql`, badEnum)).body.errors[0].message).toContain("Did you mean");

    const { url } = await startApp("pglite", disposers, { GRAPHQL_INTROSPECTION: "false" });
    const hidden = await postJson(`${url}/graphql`, { query: typo });
    expect(hidden.body.errors[0]).toMatchObject({
      message: 'Cannot query field "nme" on type "Station".',
      extensions: { code: "VALIDATION_FAILED" },
    });
    const enumAnswer = await postJson(`${url}/graphql`, badEnum);
    expect(enumAnswer.body.errors[0].message).toMatch(/EXPORTS/);
    expect(enumAnswer.body.errors[0].message).not.toContain("Did you mean");
    const overSocket = await overWebsocket(wsClient(url, disposers), `query ${typo}`);
    expect(overSocket).toContain('Cannot query field \\"nme\\" on type \\"Station\\".');
    expect(overSocket).not.toContain("Did you mean");
  });

  it("codes a syntax error GRAPHQL_PARSE_FAILED and a valid document that breaks the schema VALIDATION_FAILED, over HTTP and websockets", async () => {
    const { url } = await startApp("pglite", disposers);
    const broken = '{ station(code: "FRA") { name }';
    const syntax = await postJson(`${url}/graphql`, { query: broken });
    expect(syntax).toMatchObject({
      status: 400,
      body: {
        errors: [{ message: expect.stringMatching(/^Syntax Error: /), extensions: { code: "GRAPHQL_PARSE_FAILED" } }],
      },
    });
    const unknownField = await postJson(`${url}/graphql`, { query: '{ station(code: "FRA") { nme } }' });
    expect(unknownField).toMatchObject({
      status: 400,
      body: { errors: [{ extensions: { code: "VALIDATION_FAILED" } }] },
    });
    const client = wsClient(url, disposers);
    expect(JSON.parse(await overWebsocket(client, broken))).toMatchObject([
      { message: expect.stringMatching(/^Syntax Error: /), extensions: { code: "GRAPHQL_PARSE_FAILED" } },
    ]);
  });

  it("with GRAPHQL_OPERATIONS_FILE runs only listed operations, sent whole or by id", async () => {
    const listed = "query Station($code: String!) { station(code: $code) { code name } }";
    const live = "subscription Watch($awb: String!) { awbStatusChanged(awb: $awb) { state } }";
    const dir = mkdtempSync(path.join(tmpdir(), "cgw-ops-"));
    disposers.add(() => rmSync(dir, { recursive: true, force: true }));
    const file = path.join(dir, "operations.json");
    writeFileSync(
      file,
      JSON.stringify({
        format: "apollo-persisted-query-manifest",
        version: 1,
        operations: [
          { id: sha256Hex(listed), name: "Station", type: "query", body: listed },
          { id: sha256Hex(live), name: "Watch", type: "subscription", body: live },
        ],
      }),
    );
    const { url } = await startApp("pglite", disposers, { GRAPHQL_OPERATIONS_FILE: file });

    const whole = await postJson(`${url}/graphql`, { query: listed, variables: { code: "FRA" } });
    expect(whole.body.data.station.code).toBe("FRA");
    const byId = await postJson(`${url}/graphql`, {
      variables: { code: "AMS" },
      extensions: { persistedQuery: { version: 1, sha256Hash: sha256Hex(listed) } },
    });
    expect(byId.body.data.station.code).toBe("AMS");
    const byIdGet = await getJson(
      `${url}/graphql?variables=${encodeURIComponent('{"code":"LHR"}')}&extensions=${encodeURIComponent(JSON.stringify({ persistedQuery: { version: 1, sha256Hash: sha256Hex(listed) } }))}`,
      { headers: { "apollo-require-preflight": "1" } },
    );
    expect(byIdGet.body.data.station.code).toBe("LHR");

    const other = await postJson(`${url}/graphql`, { query: "{ stationCodes }" });
    expect(other.status).toBe(403);
    expect(other.body.errors[0].extensions.code).toBe("OPERATION_NOT_ALLOWED");
    const unknownId = await postJson(`${url}/graphql`, {
      extensions: { persistedQuery: { version: 1, sha256Hash: "0".repeat(64) } },
    });
    expect(unknownId.body.errors[0].extensions.code).toBe("OPERATION_NOT_ALLOWED");

    const client = wsClient(url, disposers);
    expect(
      await overWebsocket(client, 'subscription { awbStatusChanged(awb: "020-12345675") { state awb } }'),
    ).toContain("OPERATION_NOT_ALLOWED");
    let received: string | undefined;
    void overWebsocket(client, live, { awb: "020-12345675" }).then((r) => (received = r));
    // Ingest until the subscription (being set up meanwhile) has seen one.
    await until(async () => {
      if (received) return true;
      await postJson(
        `${url}/carrier/handling/shipment/events`,
        { awb: "020-12345675", state: "DEP", timestamp: new Date().toISOString() },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      return false;
    });
    expect(received).toContain('"state":"DEP"');
  });
});
