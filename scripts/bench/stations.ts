// npm run bench:stations — requests per second and p99 of the station read paths, each next to a bare
// Fastify route answering the same bytes, measured in the same run with the same autocannon settings.
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CONNECTIONS, DURATION_S, load, ratio, startGateway, startProcess } from "./harness";

const GATEWAY = path.resolve(__dirname, "../../src/main.js");
const BASELINE = path.resolve(__dirname, "baseline-server.js");
const STATION_FIELDS = `code name freighterHandling passengerAircraftHandling truckHandling countryShort countryLong
  import { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } firmsCode ciscFee storage externalComment openingHours { day hours { open close } } }
  export { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } openingHours { day hours { open close } } }`;
const ONE_STATION = JSON.stringify({
  query: `query One($code: String!) { station(code: $code) { ${STATION_FIELDS} } }`,
  variables: { code: "FRA" },
});
const ALL_STATIONS = JSON.stringify({ query: `{ stations { ${STATION_FIELDS} } }` });
const JSON_HEADERS = { "content-type": "application/json" };

async function main(): Promise<void> {
  const gateway = await startGateway(GATEWAY, { DATA_DIR: "memory://" });
  // The same gateway with the GraphQL response cache off: what every operation costs to execute.
  const cold = await startGateway(GATEWAY, { DATA_DIR: "memory://", GRAPHQL_RESPONSE_CACHE: "false" });
  const codes = (await (await fetch(`${gateway.url}/carrier/stations/stationcodes`)).json()) as string[];
  const twenty = JSON.stringify({ stationCodes: codes.slice(0, 20) });

  // The baseline answers exactly the bytes the gateway answers, so only the work per request differs.
  const bytes = async (url: string, init?: RequestInit) => (await fetch(url, init)).text();
  const post = (body: string) => ({ method: "POST" as const, headers: JSON_HEADERS, body });
  const routes = {
    "/station": await bytes(`${gateway.url}/carrier/stations/station/FRA`),
    "/batch": await bytes(`${gateway.url}/carrier/stations/station`, post(twenty)),
    "/graphql-one": await bytes(`${gateway.url}/graphql`, post(ONE_STATION)),
    "/graphql-all": await bytes(`${gateway.url}/graphql`, post(ALL_STATIONS)),
  };
  const dir = await mkdtemp(path.join(os.tmpdir(), "bench-"));
  await writeFile(path.join(dir, "routes.json"), JSON.stringify(routes));
  const baseline = await startProcess(BASELINE, [path.join(dir, "routes.json")], {}, "baseline listening");

  console.log(
    `bench:stations — ${DURATION_S} s per run, ${CONNECTIONS} connections, ${codes.length} stations; response sizes: station ${routes["/station"].length} B, batch of 20 ${routes["/batch"].length} B, GraphQL one ${routes["/graphql-one"].length} B, all ${routes["/graphql-all"].length} B`,
  );
  try {
    const baseOne = await load("baseline: bare route, one station's bytes", { url: `${baseline.url}/station` });
    const restOne = await load("GET /carrier/stations/station/FRA", {
      url: `${gateway.url}/carrier/stations/station/FRA`,
    });
    const baseBatch = await load("baseline: bare route, 20 stations' bytes", {
      url: `${baseline.url}/batch`,
      ...post(twenty),
    });
    const restBatch = await load("POST /carrier/stations/station (20 codes)", {
      url: `${gateway.url}/carrier/stations/station`,
      ...post(twenty),
    });
    const baseGqlOne = await load("baseline: bare route, GraphQL one-station bytes", {
      url: `${baseline.url}/graphql-one`,
      ...post(ONE_STATION),
    });
    const gqlOne = await load("GraphQL station(code)", { url: `${gateway.url}/graphql`, ...post(ONE_STATION) });
    const baseGqlAll = await load("baseline: bare route, all-stations bytes", {
      url: `${baseline.url}/graphql-all`,
      ...post(ALL_STATIONS),
    });
    const gqlAll = await load("GraphQL stations (all)", { url: `${gateway.url}/graphql`, ...post(ALL_STATIONS) });
    const coldOne = await load("GraphQL station(code), response cache off", {
      url: `${cold.url}/graphql`,
      ...post(ONE_STATION),
    });
    // Executing the whole list takes tens of milliseconds: 4 connections keep every request within the timeout.
    const baseAll4 = await load(
      "baseline: bare route, all-stations bytes, 4 conn.",
      { url: `${baseline.url}/graphql-all`, ...post(ALL_STATIONS) },
      4,
    );
    const coldAll = await load(
      "GraphQL stations (all), cache off, 4 conn.",
      { url: `${cold.url}/graphql`, ...post(ALL_STATIONS) },
      4,
    );

    console.log("\nratios (requests per second, measured / baseline):");
    console.log(`  REST single station        ${ratio(restOne, baseOne)}  (target >= 0.8)`);
    console.log(`  REST batch of 20           ${ratio(restBatch, baseBatch)}`);
    console.log(
      `  GraphQL station(code)      ${ratio(gqlOne, baseGqlOne)}  (target >= 0.6; vs the one-station route: ${ratio(gqlOne, baseOne)})`,
    );
    console.log(`  GraphQL all stations       ${ratio(gqlAll, baseGqlAll)}  (target >= 0.6)`);
    console.log(`  GraphQL station(code), response cache off   ${ratio(coldOne, baseGqlOne)}`);
    console.log(`  GraphQL all stations, response cache off    ${ratio(coldAll, baseAll4)}`);
  } finally {
    gateway.child.kill("SIGTERM");
    cold.child.kill("SIGTERM");
    baseline.child.kill("SIGTERM");
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
