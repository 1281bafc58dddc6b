import { readFileSync } from "node:fs";
import path from "node:path";
import type { App } from "../../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

const CARGO = "https://onerecord.iata.org/ns/cargo#";
const CONTEXT = { cargo: CARGO, xsd: "http://www.w3.org/2001/XMLSchema#" };
const example = (name: string) =>
  JSON.parse(readFileSync(path.join(__dirname, "examples", name), "utf8")) as Record<string, unknown>;

/** A Piece with an embedded Value, in the compacted form. */
const piece = (description: string) => ({
  "@context": CONTEXT,
  "@type": "cargo:Piece",
  "cargo:goodsDescription": description,
  "cargo:coload": false,
  "cargo:grossWeight": {
    "@type": "cargo:Value",
    "cargo:numericalValue": { "@type": "xsd:double", "@value": "20.5" },
    "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
  },
});

describe.each(BEHAVIOUR_BACKENDS)("ONE Record logistics objects on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let readerKey: string;
    let otherWriterKey: string;

    const post = (body: unknown, token: string | null = ADMIN_KEY, contentType?: string) =>
      oneRecord(`${base}/logistics-objects`, { body, token, ...(contentType ? { contentType } : {}) });
    const get = (uri: string, token: string = ADMIN_KEY) => oneRecord(uri, { token });
    const created = async (body: unknown) => {
      const res = await post(body);
      expect([res.status, res.text]).toEqual([201, ""]);
      return res.headers.get("location")!;
    };

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, {
        RATE_LIMIT_PER_SECOND: "0",
        // What applying a change does, not the decision: the holder's own changes apply at once.
        ONE_RECORD_APPLY_HOLDER_CHANGES: "true",
      }));
      base = `${app.url()}/onerecord`;
      const clients = app.services.clients;
      const reader = await clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
      readerKey = (await clients.issueKey(reader.clientId, ["events:read"])).key;
      const other = await clients.createClient({ name: "other forwarder", callbackPrefixes: ["*"] });
      otherWriterKey = (await clients.issueKey(other.clientId, ["objects:write", "events:read"])).key;
    });
    afterAll(() => disposers.disposeAll());

    it("creates a Piece: 201 with Location and Type; GET answers it with its revision headers and body, conforming", async () => {
      const res = await post(piece("BOOKS"));
      expect(res.status).toBe(201);
      const location = res.headers.get("location")!;
      expect(location).toMatch(new RegExp(`^${base}/logistics-objects/[0-9a-f-]{36}$`));
      expect(res.headers.get("type")).toBe(`${CARGO}Piece`);

      const read = await get(location);
      expect(read.status).toBe(200);
      expect(read.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(read.headers.get("content-language")).toBe("en-US");
      expect(read.headers.get("type")).toBe(`${CARGO}Piece`);
      expect(read.headers.get("revision")).toBe("1");
      expect(read.headers.get("latest-revision")).toBe("1");
      expect(read.headers.get("last-modified")).toMatch(/GMT$/);
      expect(read.body).toMatchObject({
        "@id": location,
        "@type": "cargo:Piece",
        "cargo:goodsDescription": "BOOKS",
        "cargo:coload": false,
        "api:hasRevision": "1",
        "api:hasLatestRevision": "1",
      });
      // The embedded Value got an embedded object id, the specification's "internal:" form.
      expect(read.body["cargo:grossWeight"]["@id"]).toMatch(/^internal:[0-9a-f-]{36}$/);
      await assertConforms(read.body);
    });

    it("names embedded nodes itself: two objects given one embedded id keep two; another object's URI is refused (400)", async () => {
      const withWeightId = (id: string) => {
        const body = piece("SAME ID");
        return { ...body, "cargo:grossWeight": { ...body["cargo:grossWeight"], "@id": id } };
      };
      const first = await get(await created(withWeightId("internal:same-id")));
      const second = await get(await created(withWeightId("internal:same-id")));
      const ids = [first.body["cargo:grossWeight"]["@id"], second.body["cargo:grossWeight"]["@id"]] as string[];
      expect(ids[0]).toMatch(/^internal:[0-9a-f-]{36}$/);
      expect(ids[1]).toMatch(/^internal:[0-9a-f-]{36}$/);
      expect(ids[0]).not.toBe(ids[1]);
      await assertConforms(second.body);

      const other = await created(piece("SOMEONE ELSE'S"));
      for (const claimed of [`${base}/logistics-objects/waybill-020-12345675`, other]) {
        const res = await post(withWeightId(claimed), otherWriterKey);
        expect(res.status).toBe(400);
        await assertConforms(res.body);
        expect(JSON.stringify(res.body["api:hasErrorDetail"])).toContain(`${claimed} is another logistics object`);
      }
    });

    it("HEAD answers the same headers without a body", async () => {
      const location = await created(piece("HEAD"));
      const res = await oneRecord(location, { method: "HEAD", token: ADMIN_KEY });
      expect(res.status).toBe(200);
      expect(res.text).toBe("");
      expect(res.headers.get("revision")).toBe("1");
      expect(res.headers.get("latest-revision")).toBe("1");
      expect(res.headers.get("type")).toBe(`${CARGO}Piece`);
      const missing = await oneRecord(`${base}/logistics-objects/no-such-object`, { method: "HEAD", token: ADMIN_KEY });
      expect(missing.status).toBe(404);
    });

    it("stores the same object from the compacted, expanded and flattened forms", async () => {
      const compacted = piece("FORMS");
      const expanded = [
        {
          "@type": [`${CARGO}Piece`],
          [`${CARGO}goodsDescription`]: [{ "@value": "FORMS" }],
          [`${CARGO}coload`]: [{ "@value": false }],
          [`${CARGO}grossWeight`]: [
            {
              "@type": [`${CARGO}Value`],
              [`${CARGO}numericalValue`]: [{ "@type": `${CONTEXT.xsd}double`, "@value": "20.5" }],
              [`${CARGO}unit`]: [{ "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" }],
            },
          ],
        },
      ];
      const flattened = {
        "@context": CONTEXT,
        "@graph": [
          {
            "@id": "_:weight",
            "@type": "cargo:Value",
            "cargo:numericalValue": { "@type": "xsd:double", "@value": "20.5" },
            "cargo:unit": { "@id": "https://onerecord.iata.org/ns/code-lists/MeasurementUnitCode#KGM" },
          },
          {
            "@type": "cargo:Piece",
            "cargo:goodsDescription": "FORMS",
            "cargo:coload": false,
            "cargo:grossWeight": { "@id": "_:weight" },
          },
        ],
      };
      const bodies = [];
      for (const form of [compacted, expanded, flattened]) {
        const read = await get(await created(form));
        await assertConforms(read.body);
        bodies.push(read.body);
      }
      const comparable = (body: Record<string, Record<string, unknown>>) => ({
        ...body,
        "@id": "(the object's)",
        "cargo:grossWeight": { ...body["cargo:grossWeight"], "@id": "(embedded)" },
      });
      expect(comparable(bodies[1])).toEqual(comparable(bodies[0]));
      expect(comparable(bodies[2])).toEqual(comparable(bodies[0]));
    });

    it("accepts the specification's examples of objects to create", async () => {
      for (const name of [
        "Piece.json",
        "Company.json",
        "Shipment_with_Piece.json",
        "CustomsInformation.json",
        "Sensor.expanded.json",
        "Sensor.compacted.json",
      ]) {
        const res = await post(example(name));
        expect([name, res.status, res.body]).toEqual([name, 201, undefined]);
        const read = await get(res.headers.get("location")!);
        expect([name, read.status]).toEqual([name, 200]);
        await assertConforms(read.body);
      }
    });

    it.each([
      [
        "a class that is not a logistics object",
        { "@context": CONTEXT, "@type": "cargo:Value", "cargo:numericalValue": 1 },
        "Invalid resource",
      ],
      ["no class", { "@context": CONTEXT, "cargo:goodsDescription": "x" }, "Invalid resource"],
      [
        "an unknown cargo property",
        { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:colour": "red" },
        "Invalid resource",
      ],
      [
        "events written in the object",
        { "@context": CONTEXT, "@type": "cargo:Piece", "cargo:events": { "@id": "https://x.example/e/1" } },
        "Invalid resource",
      ],
      [
        "a @graph of two objects",
        { "@context": CONTEXT, "@graph": [{ "@type": "cargo:Piece" }, { "@type": "cargo:Piece" }] },
        "Invalid resource",
      ],
      [
        "a remote context",
        { "@context": "https://example.com/context.jsonld", "@type": "cargo:Piece" },
        "Invalid body request",
      ],
      [
        "a term that expands to nothing",
        { "@context": CONTEXT, "@type": "cargo:Piece", colour: "red" },
        "Invalid body request",
      ],
      ["JSON that is not an object", "42", "Invalid body request"],
      ["malformed JSON", "{", "Invalid body request"],
    ])("refuses %s with 400 and stores nothing", async (_what, body, title) => {
      const before = await app.database.prisma.logisticsObject.count();
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ "@type": "api:Error", "api:hasTitle": title });
      expect(res.body["api:hasErrorDetail"][0]["api:hasCode"]).toBe("400");
      await assertConforms(res.body);
      expect(await app.database.prisma.logisticsObject.count()).toBe(before);
    });

    it("names the property at fault in api:hasProperty", async () => {
      const res = await post({ "@context": CONTEXT, "@type": "cargo:Piece", "cargo:colour": "red" });
      expect(res.body["api:hasErrorDetail"]).toEqual([
        expect.objectContaining({ "api:hasProperty": `${CARGO}colour` }),
      ]);
    });

    it("takes an @id of this server (409 when it exists) and gives its own to another server's", async () => {
      const uri = `${base}/logistics-objects/my-piece-${backend}`;
      const first = await post({ ...piece("MINE"), "@id": uri });
      expect([first.status, first.headers.get("location")]).toEqual([201, uri]);
      const again = await post({ ...piece("MINE"), "@id": uri });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ "api:hasTitle": "Identifier conflict" });
      expect(again.body["api:hasErrorDetail"][0]["api:hasResource"]).toBe(uri);
      await assertConforms(again.body);
      const foreign = await post({ ...piece("THEIRS"), "@id": "https://1r.example.com/logistics-objects/abc" });
      expect(foreign.status).toBe(201);
      expect(foreign.headers.get("location")).toMatch(new RegExp(`^${base}/logistics-objects/[0-9a-f-]{36}$`));
    });

    it("answers 415 for a body in another media type, 403 without objects:write, 401 without a key", async () => {
      const json = await post(piece("X"), ADMIN_KEY, "application/json");
      expect(json.status).toBe(415);
      expect(json.body).toMatchObject({ "@type": "api:Error", "api:hasTitle": "Unsupported content type" });
      await assertConforms(json.body);
      const forbidden = await post(piece("X"), readerKey);
      expect(forbidden.status).toBe(403);
      await assertConforms(forbidden.body);
      expect((await post(piece("X"), null)).status).toBe(401);
    });

    it("embeds the linked objects of this server with embedded=true, each with its revisions", async () => {
      const pieceUri = await created(piece("EMBEDDED"));
      const shipment = await created({
        "@context": CONTEXT,
        "@type": "cargo:Shipment",
        "cargo:pieces": [{ "@id": pieceUri }, { "@id": "https://1r.example.com/logistics-objects/elsewhere" }],
      });
      const linked = await get(shipment);
      expect(linked.body["cargo:pieces"]).toEqual([
        { "@id": pieceUri },
        { "@id": "https://1r.example.com/logistics-objects/elsewhere" },
      ]);
      const embedded = await get(`${shipment}?embedded=true`);
      expect(embedded.status).toBe(200);
      const pieces = embedded.body["cargo:pieces"] as Array<Record<string, unknown>>;
      expect(pieces).toContainEqual(
        expect.objectContaining({
          "@id": pieceUri,
          "cargo:goodsDescription": "EMBEDDED",
          "api:hasRevision": "1",
          "api:hasLatestRevision": "1",
        }),
      );
      expect(pieces).toContainEqual({ "@id": "https://1r.example.com/logistics-objects/elsewhere" });
      await assertConforms(embedded.body);
      expect((await get(`${shipment}?embedded=maybe`)).status).toBe(400);
    });

    it("keeps one client's objects from another: 403 as an api:Error", async () => {
      const location = await created(piece("PRIVATE"));
      const res = await get(location, otherWriterKey);
      expect(res.status).toBe(403);
      expect(res.body).toMatchObject({ "@type": "api:Error", "api:hasTitle": "Not authorized to perform action" });
      await assertConforms(res.body);
      expect((await get(`${base}/logistics-objects/no-such-object`)).status).toBe(404);
    });

    it("answers the state at a time with ?at=, 404 before the object existed and 400 for the future", async () => {
      const location = await created(piece("BEFORE"));
      const created1 = new Date();
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // ?at= has whole seconds
      const change = {
        "@context": { ...CONTEXT, api: "https://onerecord.iata.org/ns/api#" },
        "@type": "api:Change",
        "api:hasLogisticsObject": { "@id": location },
        "api:hasRevision": { "@type": "xsd:positiveInteger", "@value": "1" },
        "api:hasOperation": [
          {
            "@type": "api:Operation",
            "api:op": { "@id": "api:DELETE" },
            "api:s": location,
            "api:p": `${CARGO}goodsDescription`,
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": `${CONTEXT.xsd}string`,
              "api:hasValue": "BEFORE",
            },
          },
          {
            "@type": "api:Operation",
            "api:op": { "@id": "api:ADD" },
            "api:s": location,
            "api:p": `${CARGO}goodsDescription`,
            "api:o": {
              "@type": "api:OperationObject",
              "api:hasDatatype": `${CONTEXT.xsd}string`,
              "api:hasValue": "AFTER",
            },
          },
        ],
      };
      const patched = await oneRecord(location, { method: "PATCH", token: ADMIN_KEY, body: change });
      expect(patched.status).toBe(201);
      const latest = await get(location);
      expect([latest.headers.get("revision"), latest.body["cargo:goodsDescription"]]).toEqual(["2", "AFTER"]);

      const stamp = (at: Date) =>
        at
          .toISOString()
          .replace(/[-:]/g, "")
          .replace(/\.\d+Z$/, "Z");
      const earlier = await get(`${location}?at=${stamp(created1)}`);
      expect(earlier.status).toBe(200);
      expect(earlier.headers.get("revision")).toBe("1");
      expect(earlier.headers.get("latest-revision")).toBe("2");
      expect(earlier.body).toMatchObject({
        "cargo:goodsDescription": "BEFORE",
        "api:hasRevision": "1",
        "api:hasLatestRevision": "2",
      });
      await assertConforms(earlier.body);
      expect((await get(`${location}?at=20000101T000000Z`)).status).toBe(404);
      expect((await get(`${location}?at=${stamp(new Date(Date.now() + 86_400_000))}`)).status).toBe(400);
      const malformed = await get(`${location}?at=2026-01-01`);
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ "api:hasTitle": "Invalid query parameter request" });
    });

    it("answers the carrier's Organization and its stations as Locations, readable by any caller, read-only", async () => {
      const organization = await get(`${base}/logistics-objects/organization-carrier`, readerKey);
      expect(organization.status).toBe(200);
      expect(organization.body).toMatchObject({ "@type": "cargo:Organization", "cargo:name": "Carrier" });
      await assertConforms(organization.body);
      const station = await get(`${base}/logistics-objects/location-FRA`, readerKey);
      expect(station.status).toBe(200);
      expect(station.body).toMatchObject({ "@type": "cargo:Location", "cargo:locationCodes": { "cargo:code": "FRA" } });
      await assertConforms(station.body);
      expect((await get(`${base}/logistics-objects/location-XXX`)).status).toBe(404);
      const taken = await post({ ...piece("X"), "@id": `${base}/logistics-objects/location-FRA` });
      expect(taken.status).toBe(400);
    });
  });
});

describeBackend("postgres")("ONE Record logistics objects across instances (two apps, one PostgreSQL)", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("creates an object through one instance and reads, changes and audits it through the other", async () => {
    // Behind one public URL, as instances behind a balancer are: the URIs are the same from either.
    const publicBase = "https://1r.carrier.example/onerecord";
    const first = await startApp("postgres", disposers, {
      RATE_LIMIT_PER_SECOND: "0",
      ONE_RECORD_APPLY_HOLDER_CHANGES: "true",
      ONE_RECORD_BASE_URL: publicBase,
    });
    const second = await startApp("postgres", disposers, { ...first.env });
    const at = (app: { url: string }, uri: string) => uri.replace(publicBase, `${app.url}/onerecord`);

    const res = await oneRecord(`${first.url}/onerecord/logistics-objects`, {
      token: ADMIN_KEY,
      body: piece("SHARED"),
    });
    expect(res.status).toBe(201);
    const uri = res.headers.get("location")!;
    expect(uri.startsWith(`${publicBase}/logistics-objects/`)).toBe(true);

    const read = await oneRecord(at(second, uri), { token: ADMIN_KEY });
    expect([read.status, read.body["@id"], read.body["cargo:goodsDescription"]]).toEqual([200, uri, "SHARED"]);

    const change = {
      "@context": { ...CONTEXT, api: "https://onerecord.iata.org/ns/api#" },
      "@type": "api:Change",
      "api:hasLogisticsObject": { "@id": uri },
      "api:hasRevision": 1,
      "api:hasOperation": {
        "@type": "api:Operation",
        "api:op": { "@id": "api:ADD" },
        "api:s": uri,
        "api:p": `${CARGO}shippingMarks`,
        "api:o": { "@type": "api:OperationObject", "api:hasDatatype": `${CONTEXT.xsd}string`, "api:hasValue": "ABC" },
      },
    };
    const patched = await oneRecord(at(second, uri), { method: "PATCH", token: ADMIN_KEY, body: change });
    expect(patched.status).toBe(201);
    const request = patched.headers.get("location")!;
    expect(request.startsWith(`${publicBase}/action-requests/`)).toBe(true);

    const changed = await oneRecord(at(first, uri), { token: ADMIN_KEY });
    expect([changed.headers.get("revision"), changed.body["cargo:shippingMarks"]]).toEqual(["2", "ABC"]);
    const trail = await oneRecord(`${at(first, uri)}/audit-trail`, { token: ADMIN_KEY });
    expect(trail.body["api:hasActionRequest"]).toMatchObject({
      "@id": request,
      "api:hasRequestStatus": { "@id": "api:REQUEST_ACCEPTED" },
    });
    await assertConforms(trail.body);
    expect((await oneRecord(at(first, request), { token: ADMIN_KEY })).status).toBe(200);
  });
});
