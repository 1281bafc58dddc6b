import type { App } from "../src/app";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, graphql, postJson } from "./support/http";
import { startReceiver } from "./support/receiver";

const AWB = "020-12345675"; // check digit valid: 1234567 % 7 = 5

async function clientWithKey(app: App, scopes: string[], prefixes = ["*"], maxSubscriptions?: number) {
  const { clientId } = await app.services.clients.createClient({
    name: `client ${scopes.join("+")}`,
    callbackPrefixes: prefixes,
    ...(maxSubscriptions ? { maxSubscriptions } : {}),
  });
  const { key, keyId } = await app.services.clients.issueKey(clientId, scopes);
  return { clientId, key, keyId, auth: { authorization: `Bearer ${key}` } };
}

describe.each(BEHAVIOUR_BACKENDS)("subscriptions on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    let alice: Awaited<ReturnType<typeof clientWithKey>>;
    let bob: Awaited<ReturnType<typeof clientWithKey>>;

    const send = (method: string, path: string, body?: unknown, headers: Record<string, string> = alice.auth) =>
      getJson(`${base}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${url}/carrier/handling/shipment/subscribe`;
      alice = await clientWithKey(app, ["subscriptions"]);
      bob = await clientWithKey(app, ["subscriptions"]);
    });
    afterAll(() => disposers.disposeAll());

    describe("create", () => {
      it("verifies the callback with OPTIONS and answers 201 with Location and the canonical subscription", async () => {
        const before = receiver.optionsCount();
        const res = await send("POST", "", {
          awb: "020 12345675",
          callback: `${receiver.url}/ok/create`,
          states: "dep, ARR ,TOA,DEP",
        });
        expect(res.status).toBe(201);
        expect(res.body).toEqual({
          subscriptionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
          AWB,
          Callback: `${receiver.url}/ok/create`,
          States: "DEP,ARR,TOA",
          // This gateway's additions (docs/API.md): never expires, not disabled.
          expiresAt: null,
          disabledAt: null,
          disabledReason: null,
        });
        expect(res.headers.get("location")).toBe(`/carrier/handling/shipment/subscribe/${res.body.subscriptionId}`);
        expect(receiver.optionsCount()).toBe(before + 1);
        expect((await send("GET", `/${res.body.subscriptionId}`)).body).toEqual(res.body);
      });

      it("accepts the update spelling on create, DIS, and * absorbing the rest", async () => {
        const res = await send("POST", "", {
          AWB: "02012345686",
          Callback: `${receiver.url}/ok/spelling`,
          States: "DIS, *, rcs",
        });
        expect(res.status).toBe(201);
        expect(res.body).toMatchObject({ AWB: "020-12345686", States: "*" });
        const dis = await send("POST", "", { awb: "020-12345697", callback: `${receiver.url}/ok/dis`, states: "DIS" });
        expect(dis.body.States).toBe("DIS");
      });

      it("answers 409 naming the existing subscription for the same AWB and callback", async () => {
        const first = await send("POST", "", { awb: "020-11111115", callback: `${receiver.url}/ok/dup`, states: "*" });
        const again = await send("POST", "", { awb: "02011111115", callback: `${receiver.url}/ok/dup`, states: "DEP" });
        expect(again.status).toBe(409);
        expect(again.body).toMatchObject({ code: "SUBSCRIPTION_EXISTS", subscriptionId: first.body.subscriptionId });
        // Another client may subscribe the same AWB to the same callback.
        expect(
          (await send("POST", "", { awb: "020-11111115", callback: `${receiver.url}/ok/dup`, states: "*" }, bob.auth))
            .status,
        ).toBe(201);
      });

      it.each([
        ["an AWB with letters", { awb: "020-1234567X", callback: "/ok", states: "*" }, "awb"],
        ["an AWB with a short serial", { awb: "020-1234567", callback: "/ok", states: "*" }, "awb"],
        ["an AWB with a 2-digit prefix", { awb: "20-12345675", callback: "/ok", states: "*" }, "awb"],
        ["an AWB with a slash", { awb: "020/12345675", callback: "/ok", states: "*" }, "awb"],
        ["an AWB that is a number", { awb: 2012345675, callback: "/ok", states: "*" }, "awb"],
        ["an unknown state", { awb: AWB, callback: "/ok", states: "DEP,XYZ" }, "states"],
        ["an empty states string", { awb: AWB, callback: "/ok", states: " , " }, "states"],
        ["states as a number", { awb: AWB, callback: "/ok", states: 5 }, "states"],
        ["states as an array of non-strings", { awb: AWB, callback: "/ok", states: [1] }, "states"],
        ["a missing callback", { awb: AWB, states: "*" }, "callback"],
        ["a missing AWB", { callback: "/ok", states: "*" }, "awb"],
        ["a callback that is not a string", { awb: AWB, callback: 42, states: "*" }, "callback"],
        ["both spellings of a field", { awb: AWB, AWB, callback: "/ok", states: "*" }, "awb"],
        ["an extra field", { awb: AWB, callback: "/ok", states: "*", priority: "high" }, "priority"],
        [
          "a subscriptionId on create",
          { subscriptionId: "1b4e28ba-2fa1-41d2-883f-0016d3cca427", awb: AWB, callback: "/ok", states: "*" },
          "subscriptionId",
        ],
      ])("answers 400 for %s and stores nothing", async (_name, payload, field) => {
        const body = { ...payload } as Record<string, unknown>;
        if (typeof body.callback === "string") body.callback = `${receiver.url}${body.callback}/bad-input`;
        const count = await app.database.prisma.subscription.count();
        const res = await send("POST", "", body);
        expect(res.status).toBe(400);
        expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
        expect(res.body.code).toBe("VALIDATION_FAILED");
        expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
        expect(await app.database.prisma.subscription.count()).toBe(count);
      });

      it("answers 400 for a body that is not an object, an empty body, and malformed JSON", async () => {
        expect((await send("POST", "", ["x"])).status).toBe(400);
        const empty = await getJson(base, {
          method: "POST",
          headers: { ...alice.auth, "content-type": "application/json" },
          body: "",
        });
        expect(empty).toMatchObject({ status: 400, body: { code: "VALIDATION_FAILED", errors: [{ field: "body" }] } });
        const res = await getJson(base, {
          method: "POST",
          headers: { ...alice.auth, "content-type": "application/json" },
          body: "{awb:",
        });
        expect(res).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } });
      });

      it.each([
        ["an OPTIONS answer without POST", "/no-post", 422, "CALLBACK_INVALID", /Allow: "GET, HEAD"/],
        ["an OPTIONS answer without Allow", "/no-allow", 422, "CALLBACK_INVALID", /Allow: \(absent\)/],
        ["an OPTIONS answer of 500", "/error", 422, "CALLBACK_INVALID", /answered 500/],
        ["a redirect", "/redirect", 422, "CALLBACK_INVALID", /answered 301 \(redirect to \/ok, not followed\)/],
      ])("refuses a callback with %s", async (_name, path, status, code, detail) => {
        const res = await send("POST", "", { awb: AWB, callback: `${receiver.url}${path}/x`, states: "*" });
        expect(res.status).toBe(status);
        expect(res.body.code).toBe(code);
        expect(res.body.detail).toMatch(detail);
      });

      it("answers 424 when the callback refuses connections", async () => {
        const res = await send("POST", "", { awb: AWB, callback: "http://127.0.0.1:1/hooks", states: "*" });
        expect(res).toMatchObject({
          status: 424,
          body: { code: "CALLBACK_UNREACHABLE", networkError: "ECONNREFUSED" },
        });
      });

      it("answers 424 when OPTIONS gets no answer within 5 s", async () => {
        const started = Date.now();
        const res = await send("POST", "", { awb: AWB, callback: `${receiver.url}/hang/x`, states: "*" });
        expect(res).toMatchObject({ status: 424, body: { code: "CALLBACK_UNREACHABLE" } });
        expect(res.body.detail).toMatch(/no answer within 5 s/);
        expect(Date.now() - started).toBeGreaterThanOrEqual(4_900);
      }, 15_000);

      it.each([
        ["ftp://example.com/hook", "http or https"],
        ["not a url", "not an absolute URL"],
        ["https://user:pw@example.com/hook", "credentials"],
      ])("answers 422 for the malformed callback %s", async (callback, detail) => {
        const res = await send("POST", "", { awb: AWB, callback, states: "*" });
        expect(res).toMatchObject({ status: 422, body: { code: "CALLBACK_INVALID" } });
        expect(res.body.detail).toContain(detail);
      });

      it("answers 403 for a callback outside the client's registered prefixes", async () => {
        const carol = await clientWithKey(app, ["subscriptions"], [`${receiver.url}/ok/carol/`]);
        const outside = await send(
          "POST",
          "",
          { awb: AWB, callback: `${receiver.url}/ok/elsewhere`, states: "*" },
          carol.auth,
        );
        expect(outside).toMatchObject({ status: 403, body: { code: "CALLBACK_NOT_REGISTERED" } });
        const inside = await send(
          "POST",
          "",
          { awb: AWB, callback: `${receiver.url}/ok/carol/hook`, states: "*" },
          carol.auth,
        );
        expect(inside.status).toBe(201);
      });

      it("answers 409 when the client has reached its subscription limit", async () => {
        const dave = await clientWithKey(app, ["subscriptions"], ["*"], 1);
        expect(
          (await send("POST", "", { awb: AWB, callback: `${receiver.url}/ok/dave1`, states: "*" }, dave.auth)).status,
        ).toBe(201);
        const over = await send("POST", "", { awb: AWB, callback: `${receiver.url}/ok/dave2`, states: "*" }, dave.auth);
        expect(over).toMatchObject({ status: 409, body: { code: "SUBSCRIPTION_LIMIT_REACHED", limit: 1 } });
      });
    });

    describe("authentication and tenants", () => {
      it("answers 401 without a key, with an unknown key, a malformed header and a revoked key", async () => {
        const body = { awb: AWB, callback: `${receiver.url}/ok/auth`, states: "*" };
        expect((await send("POST", "", body, {})).body.code).toBe("UNAUTHENTICATED");
        expect((await send("POST", "", body, { authorization: "Bearer cgw_this-key-does-not-exist" })).status).toBe(
          401,
        );
        expect((await send("POST", "", body, { authorization: "Basic abc" })).status).toBe(401);
        const erin = await clientWithKey(app, ["subscriptions"]);
        expect((await send("GET", "", undefined, erin.auth)).status).toBe(200);
        await app.services.clients.revokeKey(erin.keyId);
        expect(await send("GET", "", undefined, erin.auth)).toMatchObject({
          status: 401,
          body: { code: "UNAUTHENTICATED" },
        });
      });

      it("answers 403 to a key without the subscriptions scope", async () => {
        const reader = await clientWithKey(app, ["events:read"]);
        const res = await send("GET", "", undefined, reader.auth);
        expect(res).toMatchObject({ status: 403, body: { code: "INSUFFICIENT_SCOPE" } });
      });

      it("keeps clients apart: another client's subscription is not found, not changed, not deleted, not listed", async () => {
        const mine = (
          await send("POST", "", { awb: "020-22222226", callback: `${receiver.url}/ok/tenant`, states: "*" })
        ).body;
        const path = `/${mine.subscriptionId}`;
        const update = { AWB: "020-22222226", Callback: `${receiver.url}/ok/tenant`, States: "DEP" };
        expect(await send("GET", path, undefined, bob.auth)).toMatchObject({
          status: 404,
          body: { code: "SUBSCRIPTION_NOT_FOUND" },
        });
        expect((await send("PUT", path, update, bob.auth)).status).toBe(404);
        expect((await send("DELETE", path, undefined, bob.auth)).status).toBe(404);
        expect((await send("GET", "?awb=020-22222226", undefined, bob.auth)).body).toEqual([]);
        expect((await send("GET", path)).body).toEqual(mine);
      });
    });

    describe("read, list, update, delete", () => {
      it("answers 400 for an id that is not a UUID and 404 for an unknown one", async () => {
        expect(await send("GET", "/not-a-uuid")).toMatchObject({ status: 400, body: { code: "VALIDATION_FAILED" } });
        expect(await send("GET", "/5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a")).toMatchObject({
          status: 404,
          body: { code: "SUBSCRIPTION_NOT_FOUND" },
        });
      });

      it("lists the client's own subscriptions filtered by AWB (any spelling) and callback", async () => {
        const callback = `${receiver.url}/ok/list`;
        await send("POST", "", { awb: "020-33333330", callback, states: "ARR" });
        await send("POST", "", { awb: "020-33333330", callback: `${callback}/2`, states: "ARR" });
        const byAwb = await send("GET", "?awb=02033333330");
        expect(byAwb.body.map((s: { Callback: string }) => s.Callback).sort()).toEqual([callback, `${callback}/2`]);
        const both = await send("GET", `?awb=020 33333330&callback=${encodeURIComponent(callback)}`);
        expect(both.body).toHaveLength(1);
        expect(await send("GET", "?awb=garbage")).toMatchObject({ status: 400 });
        expect(await send("GET", "?colour=red")).toMatchObject({ status: 400 });
      });

      it("replaces a subscription with PUT, verifying a changed callback only", async () => {
        const created = (
          await send("POST", "", { awb: "020-44444444", callback: `${receiver.url}/ok/put`, states: "DEP" })
        ).body;
        const path = `/${created.subscriptionId}`;
        const before = receiver.optionsCount();
        const same = await send("PUT", path, {
          subscriptionId: created.subscriptionId,
          AWB: "020-44444444",
          Callback: `${receiver.url}/ok/put`,
          States: "arr,dep",
        });
        expect(same).toMatchObject({ status: 200, body: { ...created, States: "DEP,ARR" } });
        expect(receiver.optionsCount()).toBe(before);
        const moved = await send("PUT", path, {
          AWB: "020-44444444",
          Callback: `${receiver.url}/ok/put/2`,
          States: "*",
        });
        expect(moved.body.Callback).toBe(`${receiver.url}/ok/put/2`);
        expect(receiver.optionsCount()).toBe(before + 1);
        const refused = await send("PUT", path, {
          AWB: "020-44444444",
          Callback: `${receiver.url}/no-post/put`,
          States: "*",
        });
        expect(refused).toMatchObject({ status: 422, body: { code: "CALLBACK_INVALID" } });
        expect((await send("GET", path)).body).toEqual(moved.body);
      });

      it("answers 400 to a PUT whose body id differs from the path", async () => {
        const created = (
          await send("POST", "", { awb: "020-55555552", callback: `${receiver.url}/ok/put-id`, states: "DEP" })
        ).body;
        const res = await send("PUT", `/${created.subscriptionId}`, {
          subscriptionId: "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a",
          AWB: "020-55555552",
          Callback: `${receiver.url}/ok/put-id`,
          States: "*",
        });
        expect(res).toMatchObject({
          status: 400,
          body: { code: "VALIDATION_FAILED", errors: [{ field: "subscriptionId" }] },
        });
      });

      it("answers 409 to a PUT that would duplicate another subscription", async () => {
        const a = (await send("POST", "", { awb: "020-66666666", callback: `${receiver.url}/ok/a`, states: "DEP" }))
          .body;
        const b = (await send("POST", "", { awb: "020-66666666", callback: `${receiver.url}/ok/b`, states: "DEP" }))
          .body;
        const res = await send("PUT", `/${b.subscriptionId}`, {
          AWB: "020-66666666",
          Callback: `${receiver.url}/ok/a`,
          States: "*",
        });
        expect(res).toMatchObject({
          status: 409,
          body: { code: "SUBSCRIPTION_EXISTS", subscriptionId: a.subscriptionId },
        });
      });

      it("deletes with 204 and no body, then 404", async () => {
        const created = (
          await send("POST", "", { awb: "020-77777773", callback: `${receiver.url}/ok/del`, states: "DEP" })
        ).body;
        // Many clients send a JSON content type even without a body.
        const res = await fetch(`${base}/${created.subscriptionId}`, {
          method: "DELETE",
          headers: { ...alice.auth, "content-type": "application/json" },
        });
        expect(res.status).toBe(204);
        expect(await res.text()).toBe("");
        expect((await send("DELETE", `/${created.subscriptionId}`)).status).toBe(404);
      });
    });

    describe("over GraphQL, through the same service", () => {
      it("creates, reads, pages, updates and deletes", async () => {
        const headers = alice.auth;
        const created = await graphql(
          url,
          `
            mutation ($i: SubscriptionInput!) {
              createSubscription(input: $i) {
                subscriptionId
                awb
                callback
                states
                checkDigitValid
              }
            }
          `,
          { i: { awb: "02088888881", callback: `${receiver.url}/ok/gql`, states: ["TOA", "DEP"] } },
          headers,
        );
        expect(created.errors).toBeUndefined();
        const sub = created.data.createSubscription;
        expect(sub).toEqual({
          subscriptionId: expect.any(String),
          awb: "020-88888881",
          callback: `${receiver.url}/ok/gql`,
          states: ["DEP", "TOA"],
          checkDigitValid: true,
        });
        // REST sees what GraphQL made.
        expect((await send("GET", `/${sub.subscriptionId}`)).body).toEqual({
          subscriptionId: sub.subscriptionId,
          AWB: "020-88888881",
          Callback: `${receiver.url}/ok/gql`,
          States: "DEP,TOA",
          expiresAt: null,
          disabledAt: null,
          disabledReason: null,
        });

        const page1 = await graphql(
          url,
          `
            {
              subscriptions(first: 2) {
                items {
                  subscriptionId
                }
                nextCursor
              }
            }
          `,
          undefined,
          headers,
        );
        expect(page1.data.subscriptions.items).toHaveLength(2);
        const page2 = await graphql(
          url,
          `
            query ($a: String) {
              subscriptions(first: 2, after: $a) {
                items {
                  subscriptionId
                }
              }
            }
          `,
          { a: page1.data.subscriptions.nextCursor },
          headers,
        );
        expect(page2.data.subscriptions.items[0].subscriptionId).not.toBe(
          page1.data.subscriptions.items[1].subscriptionId,
        );

        const updated = await graphql(
          url,
          `
            mutation ($id: ID!, $i: SubscriptionInput!) {
              updateSubscription(id: $id, input: $i) {
                states
              }
            }
          `,
          {
            id: sub.subscriptionId,
            i: { awb: "020-88888881", callback: `${receiver.url}/ok/gql`, states: ["ALL", "DEP"] },
          },
          headers,
        );
        expect(updated.data.updateSubscription.states).toEqual(["ALL"]);
        const deleted = await graphql(
          url,
          `
            mutation ($id: ID!) {
              deleteSubscription(id: $id) {
                subscriptionId
              }
            }
          `,
          { id: sub.subscriptionId },
          headers,
        );
        expect(deleted.data.deleteSubscription.subscriptionId).toBe(sub.subscriptionId);
        const gone = await graphql(
          url,
          `
            query ($id: ID!) {
              subscription(id: $id) {
                awb
              }
            }
          `,
          { id: sub.subscriptionId },
          headers,
        );
        expect(gone.data.subscription).toBeNull();
      });

      it("gives the contract's codes to GraphQL errors", async () => {
        const noKey = await graphql(
          url,
          `
            {
              subscriptions {
                items {
                  awb
                }
              }
            }
          `,
        );
        expect(noKey.errors![0].extensions.code).toBe("UNAUTHENTICATED");
        const badAwb = await graphql(
          url,
          `mutation { createSubscription(input: { awb: "12", callback: "${receiver.url}/ok/g", states: [DEP] }) { awb } }`,
          undefined,
          alice.auth,
        );
        expect(badAwb.errors![0].extensions).toMatchObject({ code: "VALIDATION_FAILED", errors: [{ field: "awb" }] });
        const noPost = await graphql(
          url,
          `mutation { createSubscription(input: { awb: "${AWB}", callback: "${receiver.url}/no-post/g", states: [DEP] }) { awb } }`,
          undefined,
          alice.auth,
        );
        expect(noPost.errors![0].extensions.code).toBe("CALLBACK_INVALID");
        const notMine = await graphql(
          url,
          `
            mutation {
              deleteSubscription(id: "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a") {
                awb
              }
            }
          `,
          undefined,
          bob.auth,
        );
        expect(notMine.errors![0].extensions.code).toBe("SUBSCRIPTION_NOT_FOUND");
      });

      it("lets an admin manage clients and keys, and nobody else", async () => {
        const admin = { authorization: `Bearer ${ADMIN_KEY}` };
        const created = await graphql(
          url,
          `
            mutation {
              createClient(name: "Forwarder X", callbackPrefixes: ["https://fx.example/"]) {
                clientId
                signingSecret
              }
            }
          `,
          undefined,
          admin,
        );
        expect(created.data.createClient.signingSecret).toMatch(/^whsec_/);
        const issued = await graphql(
          url,
          `
            mutation ($c: ID!) {
              issueApiKey(clientId: $c, scopes: ["subscriptions"], label: "ci") {
                keyId
                key
              }
            }
          `,
          { c: created.data.createClient.clientId },
          admin,
        );
        const key = issued.data.issueApiKey.key as string;
        const listed = await graphql(
          url,
          `
            {
              clients {
                id
                name
                keys {
                  lookupPrefix
                  scopes
                }
              }
            }
          `,
          undefined,
          admin,
        );
        expect(JSON.stringify(listed)).not.toContain(key);
        expect(
          listed.data.clients.find((c: { id: string }) => c.id === created.data.createClient.clientId).keys[0],
        ).toEqual({ lookupPrefix: key.slice(0, 16), scopes: ["subscriptions"] });
        const denied = await graphql(
          url,
          `
            {
              clients {
                id
              }
            }
          `,
          undefined,
          { authorization: `Bearer ${key}` },
        );
        expect(denied.errors![0].extensions.code).toBe("INSUFFICIENT_SCOPE");
      });
    });
  });
});

describe("callback address policy (ALLOW_PRIVATE_CALLBACKS=false)", () => {
  const disposers = new Disposers();
  let base: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { url } = await startApp("pglite", disposers, { ALLOW_PRIVATE_CALLBACKS: "false" });
    base = `${url}/carrier/handling/shipment/subscribe`;
  });
  afterAll(() => disposers.disposeAll());

  const port = () => new URL(receiver.url).port;
  it.each([
    ["loopback IPv4", () => `http://127.0.0.1:${port()}/ok`],
    ["loopback IPv6", () => `http://[::1]:${port()}/ok`],
    ["IPv4-mapped IPv6 loopback", () => `http://[::ffff:127.0.0.1]:${port()}/ok`],
    ["loopback as a decimal number", () => `http://2130706433:${port()}/ok`],
    ["loopback in hex shorthand", () => `http://0x7f.1:${port()}/ok`],
    ["loopback in octal", () => `http://0177.0.0.1:${port()}/ok`],
    ["a DNS name that resolves to loopback", () => `http://localhost:${port()}/ok`],
    ["a private 10/8 address", () => "http://10.0.0.1/ok"],
    ["a private 192.168/16 address", () => "http://192.168.1.1/ok"],
    ["the metadata address", () => "http://169.254.169.254/latest/meta-data"],
    ["IPv6 link-local", () => "http://[fe80::1]/ok"],
    ["IPv6 unique-local", () => "http://[fd12:3456::1]/ok"],
    ["0.0.0.0", () => `http://0.0.0.0:${port()}/ok`],
  ])("refuses %s with 422 and never calls it", async (_name, callback) => {
    const before = receiver.optionsCount();
    const res = await getJson(base, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ awb: AWB, callback: callback(), states: "*" }),
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("CALLBACK_INVALID");
    expect(res.body.detail).toMatch(/not allowed/);
    expect(receiver.optionsCount()).toBe(before);
  });
});

describe("metadata addresses stay forbidden with ALLOW_PRIVATE_CALLBACKS=true", () => {
  const disposers = new Disposers();
  afterEach(() => disposers.disposeAll()); // each test's gateway
  it.each(["http://169.254.169.254/latest", "http://[fe80::1]/x", "http://[fd00:ec2::254]/x"])(
    "refuses %s",
    async (callback) => {
      const { url } = await startApp("pglite", disposers);
      const res = await postJson(
        `${url}/carrier/handling/shipment/subscribe`,
        { awb: AWB, callback, states: "*" },
        { authorization: `Bearer ${ADMIN_KEY}` },
      );
      expect(res).toMatchObject({ status: 422, body: { code: "CALLBACK_INVALID" } });
    },
  );
});

describe("AWB_CHECK_DIGIT=enforce", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());
  it("refuses an AWB whose check digit is wrong, and accepts a right one", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { url } = await startApp("pglite", disposers, { AWB_CHECK_DIGIT: "enforce" });
    const headers = { authorization: `Bearer ${ADMIN_KEY}` };
    const wrong = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: "020-12345676", callback: `${receiver.url}/ok`, states: "*" },
      headers,
    );
    expect(wrong).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_FAILED", errors: [{ field: "awb", message: expect.stringContaining("check digit") }] },
    });
    const right = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: "020-12345675", callback: `${receiver.url}/ok`, states: "*" },
      headers,
    );
    expect(right.status).toBe(201);
  });
});

describe("rate limits", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());
  it("answers 429 with Retry-After once a key is over its burst", async () => {
    const { url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "1", RATE_LIMIT_BURST: "3" });
    const headers = { authorization: `Bearer ${ADMIN_KEY}` };
    const statuses = [];
    for (let i = 0; i < 5; i++)
      statuses.push((await fetch(`${url}/carrier/handling/shipment/subscribe`, { headers })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = await fetch(`${url}/carrier/handling/shipment/subscribe`, { headers });
    expect(limited.headers.get("retry-after")).toBe("1");
    expect((await limited.json()).code).toBe("RATE_LIMITED");
  });
});
