/**
 * What a new user trips over, over the real server: unknown keys named as such, the
 * ways of writing several states, the GraphQL enum for an event's state, 405 for a wrong method, and
 * the caller's eventId shown back wherever the event appears.
 */
import { getIntrospectionQuery } from "graphql";
import WebSocket from "ws";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson, graphql, postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { liveSubscriptions, liveSubscriptionsRunning, openSubscriber } from "./support/ws-protocol";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };
let serial = 4_400_000;
const nextAwb = () => {
  const s = String(++serial);
  return `020-${s}${Number(s) % 7}`;
};

describe("what a new user tripped over", () => {
  const disposers = new Disposers();
  let url: string;
  let receiverUrl: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    receiverUrl = receiver.url;
  });
  afterAll(() => disposers.disposeAll());

  it("answers the standard introspection query of every common client, and still refuses abusive introspection", async () => {
    for (const options of [
      {},
      {
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        schemaDescription: true,
        inputValueDeprecation: true,
        oneOf: true,
      },
    ]) {
      const answer = await graphql(url, getIntrospectionQuery(options));
      expect(answer.errors).toBeUndefined();
      expect(answer.data.__schema.queryType.name).toBe("Query");
    }
    const chain = `{ __type(name: "Query") { ${"fields { type { ofType { ".repeat(8)}name${" } } }".repeat(8)} } }`;
    const deep = await graphql(url, chain);
    expect(deep.errors![0]).toMatchObject({ extensions: { code: "QUERY_TOO_COMPLEX" } });
    expect(deep.errors![0].message).toContain("introspection is nested");
    // Aliases inside introspection, multiplied through fragments: small to send, enormous to answer.
    const rep = (n: number, s: string) => Array.from({ length: n }, (_, i) => `a${i}: ${s}`).join(" ");
    const fanned = await graphql(
      url,
      `{ __schema { types { ...F1 } } } fragment F1 on __Type { ${rep(60, "fields { type { ...F2 } }")} } fragment F2 on __Type { ${rep(60, "ofType { name }")} }`,
    );
    expect(fanned.errors![0]).toMatchObject({ extensions: { code: "QUERY_TOO_COMPLEX" } });
    expect(fanned.errors![0].message).toContain("introspection selects more than");
    const repeated = await graphql(
      url,
      `{ ${Array.from({ length: 6 }, (_, i) => `s${i}: __schema { types { name } }`).join(" ")} }`,
    );
    expect(repeated.errors![0]).toMatchObject({ extensions: { code: "QUERY_TOO_COMPLEX" } });
    expect(repeated.errors![0].message).toContain("__schema or __type 6 times");
  });

  it("tells an unknown key it is unknown or revoked, short or long, over HTTP and websockets; a malformed header stays malformed", async () => {
    for (const key of ["cgw_nope", "cgw_unknown-but-long-enough-0000"]) {
      const res = await getJson(`${url}/carrier/handling/shipment/subscribe`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(res.status).toBe(401);
      expect(res.body.detail).toBe("The API key is unknown or revoked");
    }
    const malformed = await getJson(`${url}/carrier/handling/shipment/subscribe`, {
      headers: { authorization: "Token abc" },
    });
    expect(malformed.body.detail).toBe('The Authorization header must be "Bearer <API key>"');

    const socket = new WebSocket(`${url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.on("close", (code, reason) => resolve({ code, reason: String(reason) })),
    );
    await new Promise((resolve) => socket.once("open", resolve));
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: "Bearer cgw_nope" } }));
    expect(await closed).toEqual({ code: 4401, reason: "The API key is unknown or revoked" });
  });

  it("takes several states separated by commas, spaces or both, or as an array, and says how to write them when one is wrong", async () => {
    const spellings: unknown[] = ["DEP ARR TOA", "DEP,ARR,TOA", "dep, arr ,toa", ["DEP", "ARR", "TOA"]];
    for (const states of spellings) {
      const res = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb: nextAwb(), callback: `${receiverUrl}/ok/states`, states },
        admin,
      );
      expect(res.status).toBe(201);
      expect(res.body.States).toBe("DEP,ARR,TOA");
    }
    const wrong = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: nextAwb(), callback: `${receiverUrl}/ok/states`, states: "DEP ARRIVED" },
      admin,
    );
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].message).toContain('"ARRIVED"');
    expect(wrong.body.errors[0].message).toContain('separated by commas or spaces, e.g. "DEP, ARR"');
    expect(wrong.body.errors[0].message).toContain("RCS, MAN, DEP, ARR, RCF, NFD, DLV, DDL, RCT, TFD, DIS, TOA");
    const notStrings = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: nextAwb(), callback: `${receiverUrl}/ok/states`, states: [1, 2] },
      admin,
    );
    expect(notStrings.status).toBe(400);
  });

  it("takes an event's state as the StatusCode enum in GraphQL, refusing ALL and free text", async () => {
    const awb = nextAwb();
    const ok = await graphql(
      url,
      `mutation { recordStatusEvents(events: [{ awb: "${awb}", state: DEP }]) { eventId duplicate } }`,
      undefined,
      admin,
    );
    expect(ok.errors).toBeUndefined();
    const all = await graphql(
      url,
      `mutation { recordStatusEvents(events: [{ awb: "${awb}", state: ALL }]) { eventId } }`,
      undefined,
      admin,
    );
    expect(all.errors![0].extensions).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ field: "[0].state" }] });
    const text = await graphql(
      url,
      `mutation { recordStatusEvents(events: [{ awb: "${awb}", state: "DEP" }]) { eventId } }`,
      undefined,
      admin,
    );
    expect(text.errors![0].extensions).toMatchObject({ code: "VALIDATION_FAILED" });
    const schema = await graphql(
      url,
      `
        {
          __type(name: "StatusEventInput") {
            inputFields {
              name
              type {
                kind
                ofType {
                  name
                }
              }
            }
          }
        }
      `,
      undefined,
      admin,
    );
    expect(schema.data.__type.inputFields.find((f: { name: string }) => f.name === "state").type).toEqual({
      kind: "NON_NULL",
      ofType: { name: "StatusCode" },
    });
  });

  it("documents the events body (one or an array, with an example) and the redelivery routes' parameters in the OpenAPI document", async () => {
    const doc = (await getJson(`${url}/openapi.json`)).body;
    const events = doc.paths["/carrier/handling/shipment/events"].post.requestBody.content["application/json"];
    expect(events.schema.oneOf).toHaveLength(2);
    expect(events.schema.oneOf[0].required).toEqual(["awb", "state"]);
    expect(events.schema.oneOf[1].type).toBe("array");
    expect(JSON.stringify(events.example ?? events.schema.example)).toContain("020-12345675");
    const byName = (route: string) =>
      (doc.paths[route].post.parameters as Array<{ name: string; in: string }>).map((p) => `${p.in}:${p.name}`).sort();
    expect(byName("/carrier/handling/shipment/subscribe/{id}/redeliver")).toEqual([
      "path:id",
      "query:from",
      "query:to",
    ]);
    expect(byName("/carrier/handling/shipment/deliveries/{deliveryId}/redeliver")).toEqual(["path:deliveryId"]);
  });

  it("serves sample stations that read plausibly: hubs handle freighters, addresses match their side, postal codes their country", async () => {
    const station = async (code: string) => (await getJson(`${url}/carrier/stations/station/${code}`)).body;
    const [fra, jfk] = [await station("FRA"), await station("JFK")];
    expect(fra.freighterHandling).toBe(true);
    expect(JSON.stringify(fra.import?.address ?? {})).not.toContain("Export");
    expect(JSON.stringify(fra.export?.address ?? {})).not.toContain("Import");
    expect(jfk.freighterHandling).toBe(true);
    expect(jfk.export.address.zipCode).toMatch(/^1[0-4]\d{3}$/); // a New York State ZIP
  });

  it("answers a wrong method on an existing path with 405 and Allow, and an unknown path with 404", async () => {
    const wrong = await getJson(`${url}/carrier/stations/stationcodes`, { method: "DELETE" });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get("allow")).toBe("GET, HEAD");
    expect(wrong.headers.get("content-type")).toContain("application/problem+json");
    expect(wrong.body).toMatchObject({ status: 405, code: "METHOD_NOT_ALLOWED" });
    const param = await getJson(
      `${url}/carrier/handling/shipment/subscribe/4b7ad3f6-0d6f-4a64-9d0c-6a2c8c1e6f10/redeliver`,
      { method: "GET" },
    );
    expect(param.status).toBe(405);
    expect(param.headers.get("allow")).toBe("POST");
    expect((await getJson(`${url}/carrier/nothing-here`)).status).toBe(404);
  });

  it("gives the caller's eventId back beside the internal id: in the answer, the history, deliveries, GraphQL and live events", async () => {
    expect.assertions(10);
    const awb = nextAwb();
    const subscription = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb, callback: `${receiverUrl}/ok/client-ids`, states: "DEP" },
      admin,
    );
    const running = await liveSubscriptions(url);
    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe(
      "1",
      `subscription($a: String!) { awbStatusChanged(awb: $a) { eventId clientEventId state } }`,
      { a: awb },
    );
    await liveSubscriptionsRunning(url, running + 1);
    const res = await postJson(
      `${url}/carrier/handling/shipment/events`,
      [
        { eventId: "abc-1", awb, state: "DEP" },
        { awb, state: "ARR" },
      ],
      admin,
    );
    expect(res.status).toBe(202);
    const [first, second] = res.body.events as Array<{ eventId: string; clientEventId: string | null }>;
    expect(first).toMatchObject({ clientEventId: "abc-1", duplicate: false });
    expect(second!.clientEventId).toBeNull();
    const again = await postJson(
      `${url}/carrier/handling/shipment/events`,
      { eventId: "abc-1", awb, state: "DEP" },
      admin,
    );
    expect(again.body.events[0]).toEqual({
      eventId: first!.eventId,
      clientEventId: "abc-1",
      duplicate: true,
      matchedSubscriptions: 0,
    });
    const history = await getJson(`${url}/carrier/handling/shipment/events?awb=${awb}`, { headers: admin });
    expect(
      history.body.map((e: { eventId: string; clientEventId: string | null }) => [e.eventId, e.clientEventId]),
    ).toEqual([
      [first!.eventId, "abc-1"],
      [second!.eventId, null],
    ]);
    const viaGraphql = await graphql(
      url,
      `
        query ($a: String!) {
          milestones(awb: $a) {
            clientEventId
          }
        }
      `,
      { a: awb },
      admin,
    );
    expect(viaGraphql.data.milestones).toEqual([{ clientEventId: "abc-1" }, { clientEventId: null }]);
    const recorded = await graphql(
      url,
      `
        mutation ($e: [StatusEventInput!]!) {
          recordStatusEvents(events: $e) {
            clientEventId
          }
        }
      `,
      { e: [{ eventId: "abc-2", awb, state: "RCF" }] },
      admin,
    );
    expect(recorded.data.recordStatusEvents).toEqual([{ clientEventId: "abc-2" }]);
    await until(() => subscriber.received.length === 3, { what: "the live events" });
    expect(subscriber.received.map((d) => d.awbStatusChanged.clientEventId)).toEqual(["abc-1", null, "abc-2"]);
    expect(subscriber.received[0]!.awbStatusChanged.eventId).toBe(first!.eventId);
    const deliveries = await getJson(
      `${url}/carrier/handling/shipment/subscribe/${subscription.body.subscriptionId}/deliveries`,
      { headers: admin },
    );
    expect(
      deliveries.body.map((d: { eventId: string; clientEventId: string | null }) => [d.eventId, d.clientEventId]),
    ).toEqual([[first!.eventId, "abc-1"]]);
  });
});
