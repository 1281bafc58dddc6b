// npm run bench:stations — requests per second and p99 of the station read paths, each next to a bare
// `node:http` server in its own process answering the same bytes (baseline-server.ts), measured in the
// same run with the same autocannon settings. The gateway runs as `npm start` runs it: default settings,
// default logging (one access line per request at info), except the budget of GraphQL requests without
// a key per client address (GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND), off: the load comes from one address;
// the query of every station's every field sends a key, as a caller of that size must.
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CONNECTIONS, DURATION_S, load, ratio, startGateway, startProcess, type Result } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "baseline-server.js");
const STATION_FIELDS = `code name freighterHandling passengerAircraftHandling truckHandling countryShort countryLong
  import { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } firmsCode ciscFee storage externalComment openingHours { day hours { open close } } }
  export { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } openingHours { day hours { open close } } }`;
const SIX_FIELDS = "code name countryShort freighterHandling truckHandling import { firmsCode }";
const JSON_HEADERS: Record<string, string> = { "content-type": "application/json" };
const post = (body: string, headers: Record<string, string> = {}) => ({
  method: "POST" as const,
  headers: { ...JSON_HEADERS, ...headers },
  body,
});
/** Every station's every field costs more than a caller without a key may ask for: that row sends one. */
const KEY = "cgw_bench-stations-key-0000000000001";

/** Every process this run started: stopped however the run ends, a failed one included. */
const started: Array<{ child: { kill(signal: NodeJS.Signals): boolean } }> = [];

async function main(): Promise<void> {
  const oneAddress = { GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "0", BOOTSTRAP_API_KEY: KEY };
  const gateway = await startGateway(GATEWAY, { DATA_DIR: "memory://", ...oneAddress });
  started.push(gateway);
  // The same gateway with the GraphQL response cache off: what every operation costs to execute.
  const cold = await startGateway(GATEWAY, { DATA_DIR: "memory://", GRAPHQL_RESPONSE_CACHE: "false", ...oneAddress });
  started.push(cold);
  const codes = (await (await fetch(`${gateway.url}/carrier/stations/stationcodes`)).json()) as string[];
  const graphql = (query: string, variables?: object) => JSON.stringify({ query, variables });
  const bodies = {
    batch: JSON.stringify({ stationCodes: codes.slice(0, 20) }),
    one: graphql(`query One($code: String!) { station(code: $code) { ${STATION_FIELDS} } }`, { code: "FRA" }),
    hundred: graphql(`query Some($codes: [String!]) { stations(codes: $codes) { ${SIX_FIELDS} } }`, {
      codes: codes.slice(0, 100),
    }),
    all: graphql(`{ stations { ${STATION_FIELDS} } }`),
  };

  // Each row: the gateway's request, and the baseline route answering the bytes the gateway answered.
  const rows: Array<{
    name: string;
    path: string;
    request: { url: string; method?: "POST"; body?: string; headers?: Record<string, string> };
  }> = [
    {
      name: "REST GET /carrier/stations/station/FRA",
      path: "/station",
      request: { url: "/carrier/stations/station/FRA" },
    },
    {
      name: "REST POST /carrier/stations/station, 20 codes",
      path: "/batch",
      request: { url: "/carrier/stations/station", ...post(bodies.batch) },
    },
    {
      name: "GraphQL station(code), full selection",
      path: "/graphql-one",
      request: { url: "/graphql", ...post(bodies.one) },
    },
    {
      name: "GraphQL stations(codes), 100 codes, six fields",
      path: "/graphql-hundred",
      request: { url: "/graphql", ...post(bodies.hundred) },
    },
    {
      name: "GraphQL stations, all, full selection",
      path: "/graphql-all",
      request: { url: "/graphql", ...post(bodies.all, { authorization: `Bearer ${KEY}` }) },
    },
  ];
  // BENCH_ROWS=/station,/graphql-one: only those rows (for quick comparisons; recorded runs take all).
  const only = process.env.BENCH_ROWS?.split(",");
  const measuredRows = only ? rows.filter((row) => only.includes(row.path)) : rows;
  const routes: Record<string, string> = {};
  for (const row of rows) {
    const headers = { ...JSON_HEADERS, ...row.request.headers };
    const answer = await fetch(`${gateway.url}${row.request.url}`, { ...row.request, headers });
    if (!answer.ok) throw new Error(`${row.name}: ${answer.status} ${await answer.text()}`);
    routes[row.path] = await answer.text();
    const uncached = await (await fetch(`${cold.url}${row.request.url}`, { ...row.request, headers })).text();
    if (row.path.startsWith("/graphql") && uncached !== routes[row.path])
      throw new Error(`${row.name}: the uncached answer differs from the cached one`);
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-"));
  await writeFile(path.join(dir, "routes.json"), JSON.stringify(routes));
  const baseline = await startProcess(BASELINE, [path.join(dir, "routes.json")], {}, "baseline listening");
  started.push(baseline);

  console.log(
    `bench:stations — ${DURATION_S} s per run after a 2 s warm-up, ${CONNECTIONS} connections, ${codes.length} stations; gateway with default settings and logging; response sizes: ${rows.map((r) => `${r.path} ${routes[r.path]!.length} B`).join(", ")}`,
  );
  const ratios: string[] = [];
  const target = (name: string, measured: Result, base: Result, goal: number | undefined) => {
    const r = measured.requestsPerSecond / base.requestsPerSecond;
    const verdict = goal === undefined ? "" : `  (target >= ${goal}: ${r >= goal ? "met" : "missed"})`;
    ratios.push(`  ${name.padEnd(58)} ${ratio(measured, base)}${verdict}`);
  };
  const goals: Record<string, [cached: number | undefined, uncached: number | undefined]> = {
    "/station": [0.9, undefined],
    "/batch": [0.8, undefined],
    "/graphql-one": [0.8, 0.3],
    "/graphql-hundred": [undefined, undefined],
    "/graphql-all": [0.8, 0.3],
  };
  try {
    for (const row of measuredRows) {
      const base = await load(`baseline: ${row.path}`, { ...row.request, url: `${baseline.url}${row.path}` });
      const measured = await load(row.name, { ...row.request, url: `${gateway.url}${row.request.url}` });
      const graphqlRow = row.path.startsWith("/graphql");
      target(graphqlRow ? `${row.name} (response cache hit)` : row.name, measured, base, goals[row.path]![0]);
      if (graphqlRow) {
        const executed = await load(`${row.name}, response cache off`, {
          ...row.request,
          url: `${cold.url}${row.request.url}`,
        });
        target(`${row.name} (executed, cache off)`, executed, base, goals[row.path]![1]);
      }
    }
    console.log("\nratios (requests per second, gateway / bare node:http in its own process):");
    for (const line of ratios) console.log(line);
  } finally {
    gateway.child.kill("SIGTERM");
    cold.child.kill("SIGTERM");
    baseline.child.kill("SIGTERM");
  }
}

main().catch((error: unknown) => {
  console.error(error);
  for (const { child } of started) child.kill("SIGTERM");
  process.exit(1);
});
