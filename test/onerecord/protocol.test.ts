import { ADMIN_KEY, BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

describe.each(BACKENDS)("ONE Record protocol on %s", (backend) => {
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
