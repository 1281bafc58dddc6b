/**
 * Tenant isolation, as a matrix: client A, holding every non-admin scope, tries every route and
 * operation on client B's objects. Each attempt must answer as if the object did not exist (404 /
 * SUBSCRIPTION_NOT_FOUND, DELIVERY_NOT_FOUND), or INSUFFICIENT_SCOPE for admin operations, and B's
 * objects must be unchanged afterwards.
 */
import type { App } from "../src/app";
import { parseFsu } from "../src/ingestion/fsu.parse";
import { BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

/** One request with a client's key (and a JSON body when given). */
const call = (url: string, method: string, path: string, key: string, body?: unknown) =>
  getJson(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
const gql = async (url: string, key: string, query: string) =>
  (await postJson(`${url}/graphql`, { query }, { authorization: `Bearer ${key}` })).body;

describe.each(BEHAVIOUR_BACKENDS)("tenant isolation on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let url: string;
    let keyA: string;
    let keyB: string;
    let clientB: string;
    let keyIdB: string;
    let subB: string;
    let deliveryB: string;
    const awb = "020-12345675";

    beforeAll(async () => {
      const receiver = await startReceiver();
      disposers.add(() => receiver.close());
      const started = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" });
      url = started.url;
      const clients = started.app.services.clients;
      const scopes = ["subscriptions", "events:read", "events:write"];
      const a = await clients.createClient({ name: "forwarder A", callbackPrefixes: ["*"] });
      const b = await clients.createClient({ name: "forwarder B", callbackPrefixes: ["*"] });
      clientB = b.clientId;
      keyA = (await clients.issueKey(a.clientId, scopes)).key;
      const issuedB = await clients.issueKey(b.clientId, scopes);
      keyB = issuedB.key;
      keyIdB = issuedB.keyId;
      const created = await call(url, "POST", "/carrier/handling/shipment/subscribe", keyB, {
        awb,
        callback: `${receiver.url}/ok/b`,
        states: "*",
      });
      expect(created.status).toBe(201);
      subB = created.body.subscriptionId;
      await call(url, "POST", "/carrier/handling/shipment/events", keyB, { awb, state: "DEP" });
      await until(
        async () =>
          (await call(url, "GET", `/carrier/handling/shipment/subscribe/${subB}/deliveries`, keyB)).body?.[0]
            ?.status === "DELIVERED",
        { what: "B's delivery" },
      );
      deliveryB = (await call(url, "GET", `/carrier/handling/shipment/subscribe/${subB}/deliveries`, keyB)).body[0]
        .deliveryId;
    });
    afterAll(() => disposers.disposeAll());

    test.each([
      ["GET", "…/subscribe/{B's id}", () => `/carrier/handling/shipment/subscribe/${subB}`, undefined],
      [
        "PUT",
        "…/subscribe/{B's id}",
        () => `/carrier/handling/shipment/subscribe/${subB}`,
        () => ({ subscriptionId: subB, AWB: awb, Callback: "http://127.0.0.1:9/stolen", States: "*" }),
      ],
      ["DELETE", "…/subscribe/{B's id}", () => `/carrier/handling/shipment/subscribe/${subB}`, undefined],
      [
        "GET",
        "…/subscribe/{B's id}/deliveries",
        () => `/carrier/handling/shipment/subscribe/${subB}/deliveries`,
        undefined,
      ],
      [
        "POST",
        "…/subscribe/{B's id}/redeliver",
        () => `/carrier/handling/shipment/subscribe/${subB}/redeliver`,
        undefined,
      ],
      [
        "POST",
        "…/deliveries/{B's delivery}/redeliver",
        () => `/carrier/handling/shipment/deliveries/${deliveryB}/redeliver`,
        undefined,
      ],
    ] as Array<[string, string, () => string, (() => unknown) | undefined]>)(
      "REST %s %s by client A answers 404",
      async (method, _label, path, body) => {
        const response = await call(url, method, path(), keyA, body?.());
        expect(response.status).toBe(404);
        expect(response.body.code).toMatch(/_NOT_FOUND$/);
        expect(JSON.stringify(response.body)).not.toContain("/ok/b"); // nothing of B's leaks
      },
    );

    test("REST list and filter by B's AWB and callback show A nothing", async () => {
      const list = await call(url, "GET", `/carrier/handling/shipment/subscribe?awb=${awb}`, keyA);
      expect(list.status).toBe(200);
      expect(list.body).toEqual([]);
    });

    test.each([
      ["subscription", () => `{ subscription(id: "${subB}") { subscriptionId } }`, null],
      ["subscriptions", () => `{ subscriptions(awb: "${awb}") { items { subscriptionId } } }`, "EMPTY"],
      [
        "updateSubscription",
        () =>
          `mutation { updateSubscription(id: "${subB}", input: { awb: "${awb}", callback: "http://127.0.0.1:9/stolen", states: [ALL] }) { subscriptionId } }`,
        "SUBSCRIPTION_NOT_FOUND",
      ],
      [
        "deleteSubscription",
        () => `mutation { deleteSubscription(id: "${subB}") { subscriptionId } }`,
        "SUBSCRIPTION_NOT_FOUND",
      ],
      ["deliveries", () => `{ deliveries(subscriptionId: "${subB}") { deliveryId } }`, "SUBSCRIPTION_NOT_FOUND"],
      ["redeliver", () => `mutation { redeliver(deliveryId: "${deliveryB}") { deliveryId } }`, "DELIVERY_NOT_FOUND"],
      ["redeliverDead", () => `mutation { redeliverDead(subscriptionId: "${subB}") }`, "SUBSCRIPTION_NOT_FOUND"],
      ["clients", () => `{ clients { id } }`, "INSUFFICIENT_SCOPE"],
      [
        "issueApiKey",
        () => `mutation { issueApiKey(clientId: "${clientB}", scopes: ["admin"]) { key } }`,
        "INSUFFICIENT_SCOPE",
      ],
      ["revokeApiKey", () => `mutation { revokeApiKey(keyId: "${keyIdB}") }`, "INSUFFICIENT_SCOPE"],
      [
        "rotateSigningSecret",
        () => `mutation { rotateSigningSecret(clientId: "${clientB}") { signingSecret } }`,
        "INSUFFICIENT_SCOPE",
      ],
      [
        "setCallbackPrefixes",
        () => `mutation { setCallbackPrefixes(clientId: "${clientB}", prefixes: ["http://evil.example/"]) }`,
        "INSUFFICIENT_SCOPE",
      ],
      [
        "createClient",
        () => `mutation { createClient(name: "x", callbackPrefixes: ["*"]) { clientId } }`,
        "INSUFFICIENT_SCOPE",
      ],
      ["importStations", () => `mutation { importStations(stations: []) { version } }`, "INSUFFICIENT_SCOPE"],
    ] as Array<[string, () => string, string | null]>)(
      "GraphQL %s by client A on B's objects is refused",
      async (_name, query, expected) => {
        const result = await gql(url, keyA, query());
        if (expected === null) expect(result).toEqual({ data: { subscription: null } });
        else if (expected === "EMPTY") expect(result.data.subscriptions.items).toEqual([]);
        else expect(result.errors[0].extensions.code).toBe(expected);
        expect(JSON.stringify(result)).not.toContain("/ok/b");
      },
    );

    test("B's objects are unchanged after all of A's attempts", async () => {
      const sub = await call(url, "GET", `/carrier/handling/shipment/subscribe/${subB}`, keyB);
      expect(sub.status).toBe(200);
      expect(sub.body.Callback).toContain("/ok/b");
      const deliveries = await call(url, "GET", `/carrier/handling/shipment/subscribe/${subB}/deliveries`, keyB);
      expect(deliveries.body).toHaveLength(1);
      expect(deliveries.body[0]).toMatchObject({ deliveryId: deliveryB, status: "DELIVERED" });
      // B's key still works: A could not revoke it.
      expect(
        (await gql(url, keyB, `{ subscription(id: "${subB}") { subscriptionId } }`)).data.subscription.subscriptionId,
      ).toBe(subB);
    });
  });
});

/**
 * One tenant cannot suppress another's milestones: a caller's eventId is its own
 * (the dedupe key names the client), and the ids the gateway derives from carrier messages
 * ("fsu:…", "xfsu:…") cannot be sent as a caller's eventId.
 */
describe.each(BEHAVIOUR_BACKENDS)("event ids per tenant on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let keyA: string;
    let keyB: string;
    const EVENTS = "/carrier/handling/shipment/events";
    const fsuDep = (awb: string) => `FSU/14\n${awb}FRAJFK/T1K100\nDEP/LH400/16OCT/FRAJFK/T1K100/A1745\n`;
    const postFsu = (key: string, text: string) =>
      getJson(`${url}${EVENTS}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "text/plain" },
        body: text,
      });
    const history = async (awb: string) => (await call(url, "GET", `${EVENTS}?awb=${awb}`, keyA)).body as any[];

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      const clients = app.services.clients;
      const scopes = ["subscriptions", "events:read", "events:write"];
      const a = await clients.createClient({ name: "carrier A", callbackPrefixes: ["*"] });
      const b = await clients.createClient({ name: "intruder B", callbackPrefixes: ["*"] });
      keyA = (await clients.issueKey(a.clientId, scopes)).key;
      keyB = (await clients.issueKey(b.clientId, scopes)).key;
    });
    afterAll(() => disposers.disposeAll());

    test("B sends A's eventId first: A's event is still stored and notified, and A's repeat is A's duplicate", async () => {
      const awb = "020-11111111";
      const subscribed = await call(url, "POST", "/carrier/handling/shipment/subscribe", keyA, {
        awb,
        callback: `${receiver.url}/ok/victim`,
        states: "DEP",
      });
      expect(subscribed.status).toBe(201);
      // B guesses A's next id and sends it first, on an AWB of its own and over GraphQL too.
      const first = await call(url, "POST", EVENTS, keyB, {
        eventId: "A-2026-0001",
        awb: "020-99999999",
        state: "RCS",
      });
      expect(first.body.events[0]).toMatchObject({ duplicate: false, clientEventId: "A-2026-0001" });
      const viaGraphql = await gql(
        url,
        keyB,
        `mutation { recordStatusEvents(events: [{ eventId: "A-2026-0002", awb: "020-99999999", state: RCS }]) { duplicate } }`,
      );
      expect(viaGraphql.data.recordStatusEvents).toEqual([{ duplicate: false }]);

      const victim = await call(url, "POST", EVENTS, keyA, [
        { eventId: "A-2026-0001", awb, state: "DEP" },
        { eventId: "A-2026-0002", awb, state: "ARR" },
      ]);
      expect(victim.status).toBe(202);
      expect(victim.body.events).toEqual([
        expect.objectContaining({ duplicate: false, clientEventId: "A-2026-0001", matchedSubscriptions: 1 }),
        expect.objectContaining({ duplicate: false, clientEventId: "A-2026-0002", matchedSubscriptions: 0 }),
      ]);
      expect((await history(awb)).map((m) => [m.state, m.clientEventId])).toEqual([
        ["DEP", "A-2026-0001"],
        ["ARR", "A-2026-0002"],
      ]);
      await until(() => receiver.posts.some((p) => p.path === "/ok/victim"), { what: "A's notification" });
      const notified = receiver.posts.filter((p) => p.path === "/ok/victim").map((p) => JSON.parse(p.body));
      expect(notified).toEqual([expect.objectContaining({ AWB: awb, State: "DEP" })]);
      const deliveries = await call(
        url,
        "GET",
        `/carrier/handling/shipment/subscribe/${subscribed.body.subscriptionId}/deliveries`,
        keyA,
      );
      expect(deliveries.body).toEqual([expect.objectContaining({ clientEventId: "A-2026-0001" })]);

      // Within A's own ids, a repeat is still a duplicate of A's event.
      const repeat = await call(url, "POST", EVENTS, keyA, { eventId: "A-2026-0001", awb, state: "DEP" });
      expect(repeat.body.events).toEqual([
        {
          eventId: victim.body.events[0].eventId,
          clientEventId: "A-2026-0001",
          duplicate: true,
          matchedSubscriptions: 0,
        },
      ]);
    });

    test.each([["fsu:abc"], ["xfsu:abc"], ["FSU:abc"], ["XFsu:"]])(
      "a caller's eventId %j, in the prefixes the gateway derives for carrier messages, is refused",
      async (eventId) => {
        const awb = "020-22222222";
        const answer = await call(url, "POST", EVENTS, keyB, [
          { awb, state: "RCS" },
          { eventId, awb, state: "DEP" },
        ]);
        expect(answer.status).toBe(400);
        expect(answer.body).toMatchObject({
          code: "VALIDATION_FAILED",
          errors: [{ field: "[1].eventId", message: expect.stringContaining("reserved") }],
        });
        const viaGraphql = await gql(
          url,
          keyB,
          `mutation { recordStatusEvents(events: [{ eventId: ${JSON.stringify(eventId)}, awb: "${awb}", state: DEP }]) { duplicate } }`,
        );
        expect(viaGraphql.errors[0].extensions.code).toBe("VALIDATION_FAILED");
        expect(await history(awb)).toEqual([]);
      },
    );

    test("B cannot pre-empt A's FSU with its derived id; the same FSU from two senders is one milestone", async () => {
      const awb = "020-33333333";
      const [message] = parseFsu(fsuDep(awb), {
        enforceCheckDigit: false,
        now: new Date(),
        timeZoneOf: () => "Europe/Berlin", // the derived id does not depend on it
      });
      const derived = message!.statuses[0]!.eventId;
      expect(derived).toMatch(/^fsu:/);
      const forged = await call(url, "POST", EVENTS, keyB, { eventId: derived, awb, state: "DLV" });
      expect(forged.status).toBe(400);

      const fromA = await postFsu(keyA, fsuDep(awb));
      expect(fromA.body.events).toEqual([expect.objectContaining({ duplicate: false, clientEventId: derived })]);
      // The same status from another sender (a relayed copy) is the same milestone: stored once.
      const fromB = await postFsu(keyB, fsuDep(awb));
      expect(fromB.body.events).toEqual([
        { eventId: fromA.body.events[0].eventId, clientEventId: derived, duplicate: true, matchedSubscriptions: 0 },
      ]);
      expect((await history(awb)).map((m) => m.state)).toEqual(["DEP"]);
    });

    test("an event stored before ids were kept per client still dedupes its re-send, and only that", async () => {
      const awb = "020-44444444";
      // Stored as the gateway did before (dedupe key "id:" + the caller's id, whoever sent it).
      const [legacy] = await app.database.sql.query<{ id: string }>(
        `WITH head AS (
           INSERT INTO awb_stream (awb, last_position) VALUES ($1, 1)
           ON CONFLICT (awb) DO UPDATE SET last_position = awb_stream.last_position + 1 RETURNING last_position
         )
         INSERT INTO status_event (id, dedupe_key, awb, state, occurred_at, received_at, position)
         SELECT gen_random_uuid(), 'id:legacy-0001', $1, 'RCS', now(), now(), last_position FROM head
         RETURNING id::text AS id`,
        [awb],
      );
      expect((await history(awb)).map((m) => m.clientEventId)).toEqual(["legacy-0001"]);
      // Its sender sends it again (a retry after the upgrade): the same event.
      const again = await call(url, "POST", EVENTS, keyA, { eventId: "legacy-0001", awb, state: "RCS" });
      expect(again.body.events).toEqual([
        { eventId: legacy!.id, clientEventId: "legacy-0001", duplicate: true, matchedSubscriptions: 0 },
      ]);
      // The same id for another milestone is another event, whoever sends it.
      const other = await call(url, "POST", EVENTS, keyB, {
        eventId: "legacy-0001",
        awb: "020-55555555",
        state: "RCS",
      });
      expect(other.body.events[0]).toMatchObject({ duplicate: false, clientEventId: "legacy-0001" });
      const otherState = await call(url, "POST", EVENTS, keyA, { eventId: "legacy-0001", awb, state: "DEP" });
      expect(otherState.body.events[0]).toMatchObject({ duplicate: false, clientEventId: "legacy-0001" });
      expect((await history(awb)).map((m) => m.state)).toEqual(["RCS", "DEP"]);
    });
  });
});
