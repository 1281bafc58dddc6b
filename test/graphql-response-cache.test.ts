import { isCacheable } from "../src/graphql/response-cache";
import { STATION_CACHE_POLICY } from "../src/stations/station.resolver";
import { Disposers, startApp } from "./support/harness";

async function ask(url: string, query: string, variables?: Record<string, unknown>) {
  const res = await fetch(`${url}/graphql`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, variables }),
  });
  return { cache: res.headers.get("x-response-cache"), body: await res.text() };
}

describe("which operations the GraphQL response cache may keep", () => {
  it.each([
    ['{ station(code: "FRA") { code name } }', true],
    ["query($c: String!) { station(code: $c) { code } stations { code } stationCodes }", true],
    ['{ station(code: "FRA") { openAt(at: "2026-01-01T00:00:00Z") } }', true],
    ['{ station(code: "FRA") { openAt } }', false],
    ['{ station(code: "FRA") { ...F } } fragment F on Station { openAt(side: IMPORT) }', false],
    ["{ health { status } }", false],
    ['{ station(code: "FRA") { code } health { status } }', false],
    ['mutation { station(code: "FRA") { code } }', false],
    ["{ __schema { types { name } } }", false],
    ["{ station(code: ", false],
  ])("%s → %p", (query, expected) => {
    expect(isCacheable(query, STATION_CACHE_POLICY)).toBe(expected);
  });
});

describe("the GraphQL response cache over HTTP", () => {
  const disposers = new Disposers();
  let url: string;
  let importStations: (input: unknown) => Promise<unknown>;
  beforeAll(async () => {
    const started = await startApp("pglite", disposers);
    url = started.url;
    importStations = (input) => started.app.services.stations.importStations(input);
  });
  afterAll(() => disposers.disposeAll());

  it("answers a repeated station query from the cache with the same bytes", async () => {
    const query = "query($c: String!) { station(code: $c) { code name countryLong } }";
    const first = await ask(url, query, { c: "SIN" });
    const second = await ask(url, query, { c: "SIN" });
    expect(first.cache).toBeNull();
    expect(second.cache).toBe("hit");
    expect(second.body).toBe(first.body);
    const other = await ask(url, query, { c: "JFK" });
    expect(other.cache).toBeNull();
    expect(JSON.parse(other.body).data.station.code).toBe("JFK");
  });

  it("answers a body sent again in the same text as it answered the first, and refuses what it refused", async () => {
    const post = (body: string, accept = "application/json") =>
      fetch(`${url}/graphql`, { method: "POST", headers: { "content-type": "application/json", accept }, body });
    const hits = async () => {
      const metrics = await (await fetch(`${url}/metrics`)).text();
      const read = (key: string) =>
        Number(
          new RegExp(`^gateway_graphql_response_cache_hits_total\\{key="${key}"\\} (\\d+)$`, "m").exec(metrics)?.[1],
        );
      return { text: read("text"), operation: read("operation") };
    };
    const text = JSON.stringify({ query: "{ stationCodes }" });
    const first = await post(text);
    const before = await hits();
    const again = await post(text);
    expect(again.headers.get("x-response-cache")).toBe("hit");
    // Found by its text (not parsed); the same operation in other text is found by its operation.
    expect(await hits()).toEqual({ text: before.text + 1, operation: before.operation });
    const spaced = await post(JSON.stringify({ query: "{ stationCodes }" }, null, 2));
    expect(spaced.headers.get("x-response-cache")).toBe("hit");
    expect((await hits()).operation).toBe(before.operation + 1);
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe(await first.text());
    // Another Accept is another answer's form: not the text's entry.
    const otherForm = await post(text, "application/graphql-response+json");
    expect(otherForm.headers.get("content-type")).toContain("application/graphql-response+json");
    // Bodies that were refused or not kept are refused again, the same way.
    for (let i = 0; i < 2; i++) {
      const malformed = await post('{"query": "{ stationCodes }"');
      expect(malformed.status).toBe(400);
      expect((await malformed.json()) as object).toMatchObject({ code: "MALFORMED_JSON" });
      const batch = await post(JSON.stringify(Array.from({ length: 50 }, () => ({ query: "{ stationCodes }" }))));
      expect(batch.status).toBe(400);
      expect(batch.headers.get("x-response-cache")).toBeNull();
    }
  });

  it("never keeps answers with errors or clock-dependent fields", async () => {
    await ask(url, '{ station(code: "fra") { code } }');
    expect((await ask(url, '{ station(code: "fra") { code } }')).cache).toBeNull();
    await ask(url, '{ station(code: "FRA") { openAt } }');
    expect((await ask(url, '{ station(code: "FRA") { openAt } }')).cache).toBeNull();
  });

  it("forgets everything when station data is imported", async () => {
    const query = "{ stationCodes }";
    await ask(url, query);
    expect((await ask(url, query)).cache).toBe("hit");
    const [first] = JSON.parse(
      (
        await ask(
          url,
          '{ stations(codes: ["ABV"]) { code name freighterHandling passengerAircraftHandling truckHandling countryShort countryLong timeZone import { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } firmsCode ciscFee storage externalComment openingHours { day hours { open close } } } export { address { street streetNo building zipCode city } contact { generalEmail generalPhone handlingEmail handlingPhone } openingHours { day hours { open close } } } } }',
        )
      ).body,
    ).data.stations;
    await importStations([
      { ...first, code: "QQX", import: { ...first.import, address: null }, temperatureProducts: null },
    ]);
    const after = await ask(url, query);
    expect(after.cache).toBeNull();
    expect(JSON.parse(after.body)).toEqual({ data: { stationCodes: ["QQX"] } });
  });
});
