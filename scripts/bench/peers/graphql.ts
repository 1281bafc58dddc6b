// bench:peers' GraphQL rows: the gateway's `station(code)` against Mercurius with graphql-jit on Fastify
// (mercurius-server.ts). Each server runs in its own process, started alone for its measurement, and
// is asked the same request body; the answers are checked to be the same bytes before any load.
import path from "node:path";
import { load, ratio, startGateway, type Result } from "../harness";

const GATEWAY = path.resolve(__dirname, "../../../src/main.js");
const MERCURIUS = path.resolve(__dirname, "mercurius-server.js");
/** bench:stations' `station(code)` row: the full selection of the REST station object. */
const STATION_QUERY = `query One($code: String!) { station(code: $code) { code name freighterHandling passengerAircraftHandling truckHandling countryShort countryLong
  import { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } firmsCode ciscFee storage externalComment openingHours { day hours { open close } } }
  export { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } openingHours { day hours { open close } } } } }`;
const STATION_BODY = JSON.stringify({ query: STATION_QUERY, variables: { code: "FRA" } });
const JSON_HEADERS = { "content-type": "application/json" };

/**
 * The gateway as bench:stations runs it: default settings on the in-memory embedded database (reads
 * never reach it: stations are served from the snapshot), with the budget of GraphQL requests without
 * a key per client address off, since the whole load comes from one address.
 */
const GATEWAY_ENV = { DATA_DIR: "memory://", GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND: "0" };

const SERVERS = {
  gatewayExecuted: { script: GATEWAY, env: { ...GATEWAY_ENV, GRAPHQL_RESPONSE_CACHE: "false" } },
  gatewayCached: { script: GATEWAY, env: GATEWAY_ENV },
  mercurius: { script: MERCURIUS, env: {} },
  mercuriusCached: { script: MERCURIUS, env: { MERCURIUS_RESPONSE_CACHE: "true" } },
};
type ServerName = keyof typeof SERVERS;

/** Starts one server alone, asks it the body once, loads it, and stops it. */
async function measure(name: ServerName, label: string): Promise<{ result: Result; answer: string }> {
  const { script, env } = SERVERS[name];
  const server = await startGateway(script, env);
  try {
    const url = `${server.url}/graphql`;
    const response = await fetch(url, { method: "POST", headers: JSON_HEADERS, body: STATION_BODY });
    const answer = await response.text();
    if (!response.ok) throw new Error(`${label}: ${response.status} ${answer}`);
    const result = await load(label, { url, method: "POST", headers: JSON_HEADERS, body: STATION_BODY });
    return { result, answer };
  } finally {
    server.child.kill("SIGTERM");
    await new Promise((r) => server.child.once("exit", r));
  }
}

/** The same bytes, or the same JSON with the difference named; anything else voids the comparison. */
function compareAnswers(label: string, reference: string, other: string): string {
  if (other === reference) return `${label}: the same ${reference.length} bytes`;
  if (JSON.stringify(JSON.parse(other)) === JSON.stringify(JSON.parse(reference)))
    return `${label}: equal as JSON, not as bytes (${other.length} B against ${reference.length} B)`;
  throw new Error(`${label}: the answers differ:\n${reference}\n${other}`);
}

export async function graphqlRows(): Promise<string[]> {
  console.log(`GraphQL station(code) over POST /graphql, request body ${STATION_BODY.length} B`);
  const mercurius = await measure("mercurius", "Mercurius + graphql-jit (jit: 1, no response cache)");
  const executed = await measure("gatewayExecuted", "gateway, GRAPHQL_RESPONSE_CACHE=false");
  const cached = await measure("gatewayCached", "gateway, default (response cache on)");
  const mercuriusCached = await measure("mercuriusCached", "Mercurius + graphql-jit + mercurius-cache");
  const checks = [
    compareAnswers("gateway executed vs cached", cached.answer, executed.answer),
    compareAnswers("Mercurius vs gateway", cached.answer, mercurius.answer),
    compareAnswers("Mercurius with mercurius-cache vs gateway", cached.answer, mercuriusCached.answer),
  ];
  const rows = [
    `station(code) executed: gateway ${executed.result.requestsPerSecond.toFixed(0)} req/s, Mercurius ${mercurius.result.requestsPerSecond.toFixed(0)} req/s → ${ratio(executed.result, mercurius.result)}x (target >= 1.0)`,
    `station(code) cached: gateway ${cached.result.requestsPerSecond.toFixed(0)} req/s, Mercurius + mercurius-cache ${mercuriusCached.result.requestsPerSecond.toFixed(0)} req/s → ${ratio(cached.result, mercuriusCached.result)}x`,
    `station(code) cached gateway vs Mercurius without a response cache → ${ratio(cached.result, mercurius.result)}x`,
  ];
  return [...checks, ...rows];
}
