/**
 * The contract test: the real gateway, every documented REST route called with valid and invalid
 * requests, and every answer checked against what /openapi.json documents for its route, status and
 * content type (ajv, objects closed: a field the document does not list fails). A status a route
 * answers but does not document fails too. Then: refusals say exactly what the services say for the
 * same input (generated inputs), and valid answers are byte for byte JSON.stringify of the views.
 */
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import fc from "fast-check";
import type { App } from "../src/app";
import type { Principal } from "../src/clients/principal";
import { Checker } from "../src/domain/checker";
import { type AppError, type FieldError, validationError } from "../src/errors";
import { parseMilestones } from "../src/milestones/milestone.validate";
import { carrierStatusView } from "../src/milestones/carrier-status.view";
import { milestoneView } from "../src/milestones/milestone.view";
import { readSubscriptionBody } from "../src/subscriptions/subscription.validate";
import { subscriptionView } from "../src/subscriptions/subscription.view";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

type Json = any;
type Operation = { template: string; method: string; pattern: RegExp; responses: Record<string, Json> };
type Answer = { status: number; type: string; text: string; body: Json };

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
const AWB = "020-12345675";
const UNKNOWN_ID = "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a";
/** Documented by Apollo's integration, not REST: GraphQL has its own contract (schema.graphql). */
const NOT_REST = new Set(["/graphql"]);

/**
 * The document's schemas, closed for checking: an object schema that lists all its fields as
 * required (every response object of this API) gets `additionalProperties: false`, so a field sent
 * but not documented fails. The document itself stays open (additive changes, CONTRACT §10).
 */
function closed(node: Json, inAllOf = false): Json {
  if (Array.isArray(node)) return node.map((n) => closed(n, inAllOf));
  if (node === null || typeof node !== "object") return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node))
    out[key] = key === "allOf" ? (value as Json[]).map((v) => closed(v, true)) : closed(value);
  const keys = out.properties && typeof out.properties === "object" ? Object.keys(out.properties) : [];
  const allRequired = keys.length > 0 && keys.every((k) => (out.required ?? []).includes(k));
  if (allRequired && out.additionalProperties === undefined && !inAllOf) out.additionalProperties = false;
  return out;
}

describe("the REST contract", () => {
  const disposers = new Disposers();
  let app: App;
  let url: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let principal: Principal;
  const operations: Operation[] = [];
  const validators = new Map<string, ValidateFunction>();
  let ajv: Ajv;
  /** "METHOD template" → statuses seen. */
  const seen = new Map<string, Set<number>>();

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    ({ app, url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    principal = (await app.services.clients.authenticate(ADMIN_KEY))!;
    const doc = await (await fetch(`${url}/openapi.json`)).json();
    ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false });
    addFormats(ajv);
    ajv.addSchema(closed(doc), "openapi.json");
    for (const [template, methods] of Object.entries(doc.paths as Record<string, Record<string, Json>>)) {
      if (NOT_REST.has(template)) continue;
      const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`);
      for (const [method, operation] of Object.entries(methods))
        operations.push({ template, method: method.toUpperCase(), pattern, responses: operation.responses });
    }
  });
  afterAll(() => disposers.disposeAll());

  function operationOf(method: string, path: string): Operation | undefined {
    const bare = path.split("?")[0]!;
    return operations.find((o) => o.method === method && o.pattern.test(bare));
  }

  function validatorFor(operation: Operation, status: number, mediaType: string): ValidateFunction {
    const pointer = ["paths", operation.template, operation.method.toLowerCase(), "responses", String(status)]
      .concat(["content", mediaType, "schema"])
      .map((s) => s.replace(/~/g, "~0").replace(/\//g, "~1"))
      .join("/");
    const key = `openapi.json#/${pointer}`;
    let validate = validators.get(key);
    if (!validate) validators.set(key, (validate = ajv.compile({ $ref: key })));
    return validate;
  }

  /** Checks an answer against the document; records it. */
  function expectDocumented(method: string, path: string, answer: Answer): void {
    const operation = operationOf(method, path);
    const what = `${method} ${path.slice(0, 120)} → ${answer.status}`;
    expect({ what, documentedRoute: operation !== undefined }).toEqual({ what, documentedRoute: true });
    const response = operation!.responses[String(answer.status)];
    expect({ what, documentedStatus: response !== undefined }).toEqual({ what, documentedStatus: true });
    const name = `${operation!.method} ${operation!.template}`;
    if (!seen.has(name)) seen.set(name, new Set());
    seen.get(name)!.add(answer.status);
    if (response.content === undefined) {
      expect({ what, body: answer.text }).toEqual({ what, body: "" });
      return;
    }
    const mediaType = answer.type.split(";")[0]!.trim();
    expect({ what, mediaType, documented: Object.keys(response.content) }).toEqual({
      what,
      mediaType,
      documented: [mediaType],
    });
    const validate = validatorFor(operation!, answer.status, mediaType);
    const valid = validate(answer.body);
    expect({ what, body: answer.body, errors: valid ? null : validate.errors }).toEqual({
      what,
      body: answer.body,
      errors: null,
    });
  }

  async function call(
    method: string,
    path: string,
    options: { body?: unknown; raw?: string; type?: string; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const headers: Record<string, string> = { ...admin, ...options.headers };
    let body: string | undefined;
    if (options.raw !== undefined || options.body !== undefined) {
      body = options.raw ?? JSON.stringify(options.body);
      headers["content-type"] = options.type ?? "application/json";
    }
    const res = await fetch(`${url}${path}`, { method, headers, body, signal: AbortSignal.timeout(15_000) });
    const text = await res.text();
    const type = res.headers.get("content-type") ?? "";
    const answer = { status: res.status, type, text, body: text === "" ? undefined : JSON.parse(text) };
    expectDocumented(method, path, answer);
    return answer;
  }

  it("documents the REST routes, each with its statuses", () => {
    expect(operations.map((o) => `${o.method} ${o.template}`).sort()).toEqual(
      [
        "GET /healthz",
        "GET /readyz",
        "GET /carrier/stations/stationcodes",
        "POST /carrier/stations/station",
        "GET /carrier/stations/station/{IATACode}",
        "GET /carrier/stations/products/{IATACode}",
        "POST /carrier/handling/shipment/events",
        "GET /carrier/handling/shipment/events",
        "GET /carrier/handling/shipment/carrier-statuses",
        "POST /carrier/handling/shipment/subscribe",
        "GET /carrier/handling/shipment/subscribe",
        "GET /carrier/handling/shipment/subscribe/{id}",
        "PUT /carrier/handling/shipment/subscribe/{id}",
        "DELETE /carrier/handling/shipment/subscribe/{id}",
        "GET /carrier/handling/shipment/subscribe/{id}/deliveries",
        "POST /carrier/handling/shipment/subscribe/{id}/enable",
        "POST /carrier/handling/shipment/subscribe/{id}/redeliver",
        "POST /carrier/handling/shipment/deliveries/{deliveryId}/redeliver",
      ].sort(),
    );
  });

  it("fails an answer whose status or body the document does not describe", () => {
    const answer = (status: number, body: Json): Answer => ({
      status,
      type: "application/json; charset=utf-8",
      text: JSON.stringify(body),
      body,
    });
    expect(() => expectDocumented("GET", "/healthz", answer(418, {}))).toThrow(/documentedStatus/);
    expect(() => expectDocumented("GET", "/healthz", answer(200, { status: "ok", extra: 1 }))).toThrow(/errors/);
    const subscription = { subscriptionId: UNKNOWN_ID, AWB, Callback: "http://x", States: "*" };
    const path = "/carrier/handling/shipment/subscribe";
    expect(() => expectDocumented("GET", path, answer(200, [{ ...subscription, AWB: 5 }]))).toThrow(/errors/);
    expect(() => expectDocumented("GET", path, answer(200, [{ ...subscription, States: undefined }]))).toThrow(
      /errors/,
    );
    expect(() => expectDocumented("GET", "/nowhere", answer(200, {}))).toThrow(/documentedRoute/);
    seen.clear();
  });

  it("health", async () => {
    expect((await call("GET", "/healthz")).text).toBe('{"status":"ok"}');
    const ready = await call("GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.text).toBe(JSON.stringify(await app.services.health.readiness()));
  });

  it("stations", async () => {
    const base = "/carrier/stations";
    const codes = (await call("GET", `${base}/stationcodes`)).body as string[];
    // Every station, through the batch route: the snapshot's bytes against the documented schema.
    for (let i = 0; i < codes.length; i += 100)
      expect((await call("POST", `${base}/station`, { body: { stationCodes: codes.slice(i, i + 100) } })).status).toBe(
        200,
      );
    for (const code of codes.slice(0, 40)) {
      expect((await call("GET", `${base}/station/${code}`)).status).toBe(200);
      expect((await call("GET", `${base}/products/${code}`)).status).toBe(200);
    }
    for (const bad of ["fra", "FRAN", "QQQ", "%20"]) {
      await call("GET", `${base}/station/${bad}`);
      await call("GET", `${base}/products/${bad}`);
    }
    for (const body of [
      {},
      { stationCodes: [] },
      { stationCodes: ["FRA", "QQQ"] },
      ["FRA"],
      null,
      { stationCodes: [1] },
    ])
      expect((await call("POST", `${base}/station`, { body })).status).toBeGreaterThanOrEqual(400);
    expect((await call("POST", `${base}/station`, { raw: "{" })).status).toBe(400);
    expect((await call("POST", `${base}/station`, { raw: "FRA", type: "application/xml" })).status).toBe(415);
    expect((await call("POST", `${base}/station`, { raw: `"${"x".repeat(1_100_000)}"` })).status).toBe(413);
    expect((await call("POST", `${base}/station`)).status).toBe(400);
  });

  it("milestones, subscriptions and deliveries", async () => {
    const shipment = "/carrier/handling/shipment";
    const created = await call("POST", `${shipment}/subscribe`, {
      body: { awb: AWB, callback: `${receiver.url}/ok/contract`, states: "*" },
    });
    expect(created.status).toBe(201);
    const id = created.body.subscriptionId as string;
    // Subscriptions: every status a client can cause.
    expect((await call("POST", `${shipment}/subscribe`, { body: created.body })).status).toBe(400);
    expect(
      (
        await call("POST", `${shipment}/subscribe`, {
          body: { awb: AWB, callback: created.body.Callback, states: "*" },
        })
      ).status,
    ).toBe(409);
    const refused = { awb: AWB, callback: `${receiver.url}/no-post/c`, states: "DEP" };
    expect((await call("POST", `${shipment}/subscribe`, { body: refused })).status).toBe(422);
    const unreachable = { awb: AWB, callback: "http://127.0.0.1:9/c", states: "DEP" };
    expect((await call("POST", `${shipment}/subscribe`, { body: unreachable })).status).toBe(424);
    expect(
      (await call("POST", `${shipment}/subscribe`, { body: refused, headers: { authorization: "" } })).status,
    ).toBe(401);
    const { clientId } = await app.services.clients.createClient({ name: "reader", callbackPrefixes: ["*"] });
    const reader = { authorization: `Bearer ${(await app.services.clients.issueKey(clientId, ["events:read"])).key}` };
    expect((await call("POST", `${shipment}/subscribe`, { body: refused, headers: reader })).status).toBe(403);
    expect((await call("POST", `${shipment}/subscribe`, { raw: "{", type: "application/json" })).status).toBe(400);
    expect((await call("POST", `${shipment}/subscribe`, { raw: "x", type: "application/xml" })).status).toBe(415);
    expect((await call("GET", `${shipment}/subscribe`)).status).toBe(200);
    expect((await call("GET", `${shipment}/subscribe?awb=${AWB}`)).body).toHaveLength(1);
    expect((await call("GET", `${shipment}/subscribe?colour=red`)).status).toBe(400);
    expect((await call("GET", `${shipment}/subscribe`, { headers: reader })).status).toBe(403);
    expect((await call("GET", `${shipment}/subscribe/${id}`)).status).toBe(200);
    expect((await call("GET", `${shipment}/subscribe/nope`)).status).toBe(400);
    expect((await call("GET", `${shipment}/subscribe/${UNKNOWN_ID}`)).status).toBe(404);
    const replaced = { AWB, Callback: `${receiver.url}/ok/contract`, States: "DEP ARR" };
    expect((await call("PUT", `${shipment}/subscribe/${id}`, { body: replaced })).status).toBe(200);
    expect((await call("PUT", `${shipment}/subscribe/${UNKNOWN_ID}`, { body: replaced })).status).toBe(404);
    expect((await call("PUT", `${shipment}/subscribe/${id}`, { body: { ...replaced, States: 1 } })).status).toBe(400);
    expect((await call("PUT", `${shipment}/subscribe/${id}`, { raw: "x", type: "application/xml" })).status).toBe(415);

    // Milestones.
    const ingested = await call("POST", `${shipment}/events`, {
      body: [
        { eventId: "contract-1", awb: AWB, state: "DEP", station: "FRA", flight: "LH8160" },
        { awb: AWB, state: "arr", timestamp: "2026-11-21T10:00:00+01:00" },
        { eventId: "contract-1", awb: AWB, state: "DEP" },
      ],
    });
    expect(ingested.status).toBe(202);
    expect(ingested.body.events.map((e: { duplicate: boolean }) => e.duplicate)).toEqual([false, false, true]);
    expect((await call("POST", `${shipment}/events`, { body: { awb: AWB, state: "TOA", extra: 1 } })).status).toBe(400);
    expect((await call("POST", `${shipment}/events`, { body: [] })).status).toBe(400);
    expect((await call("POST", `${shipment}/events`, { body: {}, headers: reader })).status).toBe(403);
    expect((await call("POST", `${shipment}/events`, { raw: "[", type: "application/json" })).status).toBe(400);
    // XML is read as an XFSU message: not one, so 400; a type no ingestion takes is 415.
    expect((await call("POST", `${shipment}/events`, { raw: "x", type: "application/xml" })).status).toBe(400);
    expect((await call("POST", `${shipment}/events`, { raw: "x", type: "application/pdf" })).status).toBe(415);
    const history = await call("GET", `${shipment}/events?awb=${AWB}`);
    expect(history.text).toBe(JSON.stringify((await app.services.milestones.history(AWB)).map(milestoneView)));
    expect((await call("GET", `${shipment}/events`)).status).toBe(400);
    // The statuses carrier messages reported: an FSU's, as its view, byte for byte.
    const fsu = `FSU/14\n${AWB}FRAJFK/T1K10\nFOH/16OCT1317/FRA/T1K10\n`;
    expect((await call("POST", `${shipment}/events`, { raw: fsu, type: "text/plain" })).status).toBe(202);
    const statuses = await call("GET", `${shipment}/carrier-statuses?awb=${AWB}`);
    expect(statuses.status).toBe(200);
    expect(statuses.text).toBe(
      JSON.stringify((await app.services.milestones.carrierStatuses(AWB)).map(carrierStatusView)),
    );
    expect(JSON.parse(statuses.text)).toHaveLength(1);
    expect((await call("GET", `${shipment}/carrier-statuses?awb=x`)).status).toBe(400);
    expect(
      (await call("GET", `${shipment}/events?awb=1`, { headers: { authorization: "Bearer cgw_nope" } })).status,
    ).toBe(401);

    // Deliveries: the two events notified the subscription.
    await until(() => receiver.posts.filter((p) => p.path === "/ok/contract").length >= 2, { what: "notifications" });
    await until(
      async () =>
        (await app.services.deliveries.listForSubscription(principal, id)).every((d) => d.status === "DELIVERED"),
      { what: "deliveries recorded" },
    );
    const deliveries = await call("GET", `${shipment}/subscribe/${id}/deliveries`);
    expect(deliveries.body).toHaveLength(2);
    expect(deliveries.text).toBe(JSON.stringify(await app.services.deliveries.listForSubscription(principal, id)));
    for (const query of ["?status=DEAD", "?first=1", "?status=dead", "?first=0", "?first=x"])
      await call("GET", `${shipment}/subscribe/${id}/deliveries${query}`);
    expect((await call("GET", `${shipment}/subscribe/${UNKNOWN_ID}/deliveries?first=x`)).status).toBe(404);
    expect((await call("POST", `${shipment}/subscribe/${id}/redeliver?from=2026-01-01T00:00:00Z`)).body).toEqual({
      requeued: 0,
    });
    expect((await call("POST", `${shipment}/subscribe/${id}/redeliver?from=yesterday`)).status).toBe(400);
    expect((await call("POST", `${shipment}/subscribe/${id}/redeliver?to=1&to=2`)).status).toBe(400);
    expect((await call("POST", `${shipment}/subscribe/${UNKNOWN_ID}/redeliver`)).status).toBe(404);
    expect(
      (await call("POST", `${shipment}/subscribe/${id}/redeliver`, { raw: "x", type: "application/xml" })).status,
    ).toBe(415);
    const deliveryId = deliveries.body[0].deliveryId as string;
    const again = await call("POST", `${shipment}/deliveries/${deliveryId}/redeliver`);
    expect(again.body).toMatchObject({ deliveryId, status: "PENDING" });
    expect((await call("POST", `${shipment}/deliveries/nope/redeliver`)).status).toBe(400);
    expect((await call("POST", `${shipment}/deliveries/${UNKNOWN_ID}/redeliver`)).status).toBe(404);
    expect((await call("POST", `${shipment}/deliveries/${UNKNOWN_ID}/redeliver`, { headers: reader })).status).toBe(
      403,
    );
    expect((await call("GET", `${shipment}/subscribe/${id}/deliveries`, { headers: reader })).status).toBe(403);
    // Enabling one that is enabled changes nothing and answers it as its view.
    const enabled = await call("POST", `${shipment}/subscribe/${id}/enable`);
    expect(enabled.text).toBe(JSON.stringify(subscriptionView(await app.services.subscriptions.get(principal, id))));
    expect((await call("POST", `${shipment}/subscribe/${UNKNOWN_ID}/enable`)).status).toBe(404);
    expect((await call("POST", `${shipment}/subscribe/nope/enable`)).status).toBe(400);

    expect((await call("DELETE", `${shipment}/subscribe/${id}`, { raw: "x", type: "application/xml" })).status).toBe(
      415,
    );
    expect((await call("DELETE", `${shipment}/subscribe/${id}`)).status).toBe(204);
    expect((await call("DELETE", `${shipment}/subscribe/${id}`)).status).toBe(404);
    expect((await call("DELETE", `${shipment}/subscribe/x`)).status).toBe(400);
  });

  describe("a refused request hears what the services say about the same input", () => {
    const junk = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.constantFrom(" ", "fra", "FRA", "02012345675", "020 1234567", "*", "dep, arr", "\u2028", "x".repeat(201)),
      fc.array(fc.constantFrom("DEP", "fra", 1), { maxLength: 3 }),
    );
    const problemsOf = (read: () => unknown): FieldError[] | null => {
      try {
        read();
        return null;
      } catch (error) {
        return [...((error as AppError).errors ?? [])];
      }
    };
    const RUNS = 300;
    /** Sends each body; where the reading refuses it, the answer is 400 with exactly its problems. */
    async function expectSameRefusals(
      [method, path]: [string, string],
      bodies: fc.Arbitrary<unknown>,
      read: (body: unknown) => unknown,
    ) {
      // Each run asserts inside the property (and `call` adds 3 or 5 schema checks per answer, so the
      // total varies): the count of runs compared is what must come out exact.
      expect.hasAssertions();
      let compared = 0;
      await fc.assert(
        fc.asyncProperty(bodies, async (body) => {
          compared++;
          const expected = problemsOf(() => read(body));
          const answer = await call(method, path, { body });
          if (expected)
            expect({ body, status: answer.status, errors: answer.body.errors }).toEqual({
              body,
              status: 400,
              errors: expected,
            });
          else expect({ body, status: answer.status }).not.toEqual({ body, status: 400 });
        }),
        { numRuns: RUNS, seed: 20261201 },
      );
      expect(compared).toBe(RUNS);
    }

    it("POST …/events: parseMilestones", async () => {
      const iso = fc.constantFrom(
        "2026-11-21T10:00:00Z",
        "2026-11-21T10:00+0100",
        "2026-02-31T10:00:00Z",
        "2026-11-21",
      );
      const event = fc.record(
        {
          eventId: fc.oneof(junk, fc.constant("e")),
          awb: fc.oneof(junk, fc.constantFrom(AWB, " 020 12345675 ", "02012345676")),
          state: fc.oneof(junk, fc.constantFrom("DEP", " toa ", "TOA", "ALL")),
          timestamp: fc.oneof(junk, iso),
          toaTimestamp: fc.oneof(junk, iso),
          station: fc.oneof(junk, fc.constantFrom("FRA", "LHR", "ZZZ")),
          flight: fc.oneof(junk, fc.constantFrom("LH8160", "5X1")),
          weight: junk,
        },
        { requiredKeys: [] },
      );
      const bodies = fc.oneof(
        { weight: 4, arbitrary: event },
        { weight: 4, arbitrary: fc.array(fc.oneof(event, junk), { maxLength: 4 }) },
        { weight: 1, arbitrary: junk },
      );
      await expectSameRefusals(["POST", "/carrier/handling/shipment/events"], bodies, (body) =>
        parseMilestones(body, {
          enforceCheckDigit: false,
          now: new Date(),
          isStation: (code) => app.services.stations.isStation(code),
        }),
      );
    });

    it("POST …/stations/station: the body's keys, then StationService.parseCodeList", async () => {
      const code = fc.oneof(junk, fc.constantFrom("FRA", "JFK"));
      const bodies = fc.oneof(
        fc.record(
          { stationCodes: fc.oneof(junk, fc.array(code, { maxLength: 4 })), other: junk },
          { requiredKeys: [] },
        ),
        junk,
      );
      await expectSameRefusals(["POST", "/carrier/stations/station"], bodies, (body) => {
        const check = new Checker();
        const record = check.object(body, "body", ["stationCodes"], { nullable: false });
        if (!record || !check.ok) throw validationError(check.problems);
        app.services.stations.parseCodeList(record.stationCodes);
      });
    });

    const subscriptionBodies = (withId: boolean) =>
      fc.oneof(
        fc.record(
          {
            awb: fc.oneof(junk, fc.constant(AWB)),
            AWB: fc.oneof(junk, fc.constant(AWB)),
            callback: fc.oneof(junk, fc.constantFrom("http://127.0.0.1:9/x", "not a url")),
            Callback: junk,
            states: fc.oneof(junk, fc.constantFrom("DEP", "", "DEP NOPE", "*")),
            States: junk,
            ...(withId ? { subscriptionId: fc.oneof(junk, fc.constant(UNKNOWN_ID)) } : {}),
            other: junk,
          },
          { requiredKeys: [] },
        ),
        junk,
      );

    it("POST …/subscribe: readSubscriptionBody, then SubscriptionService.validate", async () => {
      await expectSameRefusals(["POST", "/carrier/handling/shipment/subscribe"], subscriptionBodies(false), (body) =>
        app.services.subscriptions.validate(readSubscriptionBody(body, { withId: false }).input),
      );
    });

    it("PUT …/subscribe/{id}: the same, and the id in the body", async () => {
      const path = `/carrier/handling/shipment/subscribe/${UNKNOWN_ID}`;
      await expectSameRefusals(["PUT", path], subscriptionBodies(true), (body) => {
        const { input, subscriptionId } = readSubscriptionBody(body, { withId: true });
        if (subscriptionId !== undefined && subscriptionId !== UNKNOWN_ID)
          throw validationError([
            { field: "subscriptionId", message: `differs from the id in the path (${UNKNOWN_ID})` },
          ]);
        app.services.subscriptions.validate(input);
      });
    });
  });

  it("was called on every documented route, with an answer of each kind", () => {
    const expected = operations.map((o) => `${o.method} ${o.template}`).sort();
    expect([...seen.keys()].sort()).toEqual(expected);
    for (const [name, statuses] of seen) {
      const kinds = new Set([...statuses].map((s) => Math.floor(s / 100)));
      if (name !== "GET /healthz" && name !== "GET /readyz" && name !== "GET /carrier/stations/stationcodes")
        expect({ name, kinds: [...kinds].sort() }).toEqual({ name, kinds: [2, 4] });
    }
  });

  it("shows the subscription as its view, byte for byte", async () => {
    const created = await app.services.subscriptions.create(principal, {
      awb: "020-00000011",
      callback: `${receiver.url}/ok/bytes`,
      states: ["DEP"],
    });
    const answer = await call("GET", `/carrier/handling/shipment/subscribe/${created.id}`);
    expect(answer.text).toBe(JSON.stringify(subscriptionView(created)));
  });
});
