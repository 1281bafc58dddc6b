import { get } from "node:http";
import { negotiateApiVersion } from "../../src/onerecord/negotiation";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record protocol on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let base: string;

    beforeAll(async () => {
      const { url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" });
      base = `${url}/onerecord`;
    });
    afterAll(() => disposers.disposeAll());

    it("answers the server information: the carrier as data holder, both API versions, unversioned and versioned ontologies", async () => {
      const res = await oneRecord(`${base}/`, { token: ADMIN_KEY });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(res.headers.get("content-language")).toBe("en-US");
      expect(res.headers.get("last-modified")).toMatch(/GMT$/);
      expect(res.body).toMatchObject({
        "@id": `${base}/`,
        "@type": "api:ServerInformation",
        "api:hasDataHolder": { "@id": `${base}/logistics-objects/organization-carrier` },
        "api:hasServerEndpoint": base,
        "api:hasSupportedApiVersion": ["2.3.0", "2.2.0"],
        "api:hasSupportedContentType": ["application/ld+json"],
        "api:hasSupportedLanguage": ["en-US"],
      });
      expect(res.body["api:hasSupportedOntology"]).toEqual(
        expect.arrayContaining(["https://onerecord.iata.org/ns/cargo", "https://onerecord.iata.org/ns/api"]),
      );
      expect(res.body["api:hasSupportedOntologyVersion"]).toEqual(
        expect.arrayContaining(["https://onerecord.iata.org/ns/api/2.3.0", "https://onerecord.iata.org/ns/api/2.2.0"]),
      );
      await assertConforms(res.body);
    });

    it("echoes the version asked for in Content-Type, and refuses what it cannot answer with 406", async () => {
      const older = await oneRecord(`${base}/`, { token: ADMIN_KEY, accept: "application/ld+json; version=2.2.0" });
      expect(older.headers.get("content-type")).toBe("application/ld+json; version=2.2.0");
      const refused = await oneRecord(`${base}/`, { token: ADMIN_KEY, accept: "application/json" });
      expect(refused.status).toBe(406);
      expect(refused.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(refused.body["@type"]).toBe("api:Error");
      await assertConforms(refused.body);
      const unknownVersion = await oneRecord(`${base}/`, {
        token: ADMIN_KEY,
        accept: "application/ld+json; version=1.0.0",
      });
      expect(unknownVersion.status).toBe(406);
    });

    it("answers 405 with Allow and 404 for what the API does not have, as api:Errors", async () => {
      const put = await oneRecord(`${base}/logistics-objects/some-id`, { method: "PUT", token: ADMIN_KEY, body: {} });
      expect(put.status).toBe(405);
      expect(put.headers.get("allow")).toBe("GET, HEAD, PATCH");
      expect(put.body).toMatchObject({ "@type": "api:Error", "api:hasTitle": "Method not allowed" });
      await assertConforms(put.body);
      const missing = await oneRecord(`${base}/no-such-resource`, { token: ADMIN_KEY });
      expect(missing.status).toBe(404);
      expect(missing.body).toMatchObject({ "@type": "api:Error", "api:hasTitle": "Resource not found" });
      await assertConforms(missing.body);
    });

    it("refuses a body that is not JSON-LD with 415, and reads one whatever its parameters", async () => {
      const plain = await oneRecord(`${base}/logistics-objects`, { token: ADMIN_KEY, body: "{}", contentType: null });
      expect(plain.status).toBe(415);
      await assertConforms(plain.body);
      const versioned = await oneRecord(`${base}/logistics-objects`, {
        token: ADMIN_KEY,
        body: { "@context": { cargo: "https://onerecord.iata.org/ns/cargo#" }, "@type": "cargo:Piece" },
        contentType: "application/ld+json; version=2.3.0; charset=utf-8",
      });
      expect(versioned.status).toBe(201);
    });

    it("negotiates before it authenticates: 406 costs no key", async () => {
      expect((await oneRecord(`${base}/`, { accept: "text/turtle" })).status).toBe(406);
    });

    it("answers 401 as an api:Error without credentials", async () => {
      const res = await oneRecord(`${base}/`);
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({
        "@type": "api:Error",
        "api:hasTitle": "Not authenticated or expired token",
        "api:hasErrorDetail": [{ "@type": "api:ErrorDetail", "api:hasCode": "401" }],
      });
      await assertConforms(res.body);
    });
  });
});

describe("content negotiation of the ONE Record API", () => {
  it.each([
    [undefined, "2.3.0"],
    ["", "2.3.0"],
    ["application/ld+json", "2.3.0"],
    ["application/ld+json; version=2.2.0", "2.2.0"],
    ['application/ld+json; version="2.2.0"', "2.2.0"],
    ["*/*", "2.3.0"],
    ["application/*;q=0.5", "2.3.0"],
    ["application/json, application/ld+json; version=2.2.0; q=0.8", "2.2.0"],
    ["application/ld+json; version=2.2.0; q=0.4, application/ld+json; version=2.3.0; q=0.9", "2.3.0"],
    ["application/ld+json; version=1.2", undefined],
    ["application/json", undefined],
    ["application/ld+json; q=0", undefined],
    ["text/turtle", undefined],
  ])("Accept %j answers version %s", (accept, version) => {
    expect(negotiateApiVersion(accept)).toBe(version);
  });
});

describe("where the ONE Record API lives", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("mounts under ONE_RECORD_BASE_PATH and names everything from ONE_RECORD_BASE_URL, whatever the Host", async () => {
    const { url } = await startApp("pglite", disposers, {
      ONE_RECORD_BASE_PATH: "/one-record",
      ONE_RECORD_BASE_URL: "https://1r.carrier.example/one-record",
    });
    // fetch sends the URL's host whatever it is given: node:http sends the Host asked for.
    const res = await new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
      const request = get(
        `${url}/one-record/`,
        { headers: { host: "attacker.example", authorization: `Bearer ${ADMIN_KEY}`, accept: "application/ld+json" } },
        (answer) => {
          let text = "";
          answer.on("data", (chunk: Buffer) => (text += chunk.toString()));
          answer.on("end", () =>
            resolve({ status: answer.statusCode!, body: JSON.parse(text) as Record<string, unknown> }),
          );
        },
      );
      request.on("error", reject);
    });
    expect(res.status).toBe(200);
    expect(res.body["@id"]).toBe("https://1r.carrier.example/one-record/");
    expect(res.body["api:hasDataHolder"]).toEqual({
      "@id": "https://1r.carrier.example/one-record/logistics-objects/organization-carrier",
    });
    expect((await oneRecord(`${url}/onerecord/`, { token: ADMIN_KEY })).status).toBe(404);
  });
});
