/**
 * Tenant isolation, as a matrix: client A, holding every non-admin scope, tries every route and
 * operation on client B's objects. Each attempt must answer as if the object did not exist (404 /
 * SUBSCRIPTION_NOT_FOUND, DELIVERY_NOT_FOUND), or INSUFFICIENT_SCOPE for admin operations, and B's
 * objects must be unchanged afterwards.
 */
import { BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
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

describe.each(BACKENDS)("tenant isolation on %s", (backend) => {
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
