/**
 * Registered callback prefixes (CONTRACT §2): a prefix is a URL — its origin
 * (scheme, host, port) matched exactly, its path on segment boundaries — not a string the callback
 * must start with. Unit tests of the matcher and of registration, then the same over the server: the
 * attack URLs answered 403, legitimate ones subscribed, bad prefixes refused where they are registered
 * (GraphQL, the service the admin CLI calls, the bootstrap setting), stored prefixes read as before.
 */
import type { App } from "../src/app";
import { parsePrefixes } from "../src/clients/client.validate";
import { ConfigError, loadConfig } from "../src/config";
import { AppError } from "../src/errors";
import { isRegistered } from "../src/subscriptions/callback-url";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { getJson, graphql } from "./support/http";
import { startReceiver } from "./support/receiver";

const admits = (prefix: string, callback: string) => isRegistered(new URL(callback), [prefix]);

describe("the prefix matcher", () => {
  it.each([
    ["https://hooks.acme.com", "https://hooks.acme.com.evil.net/"],
    ["https://hooks.acme.com", "https://hooks.acme.com.evil.net/hooks"],
    ["https://hooks.acme.com", "https://hooks.acme.community/"],
    ["https://hooks.acme.com", "https://hooks.acme.com:8443/"],
    ["https://hooks.acme.com", "http://hooks.acme.com/"],
    ["https://hooks.acme.com/", "https://hooks.acme.com.evil.net/"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks-evil"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooksx/a"],
    ["https://hooks.acme.com/hooks/", "https://hooks.acme.com/hooksx"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/HOOKS/a"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/../evil"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/%2e%2e/evil"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/..%2Fevil"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks%2F..%2Fevil"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/..%5Cevil"],
    // The userinfo trick: the host is evil.net (the gateway refuses credentials in a callback anyway).
    ["https://hooks.acme.com", "https://hooks.acme.com@evil.net/"],
    ["https://hooks.acme.com", "https://hooks.acme.com:443@evil.net/"],
    ["http://127.0.0.1:808", "http://127.0.0.1:8080/"],
  ])("%s does not admit %s", (prefix, callback) => {
    expect(admits(prefix, callback)).toBe(false);
  });

  it.each([
    ["https://hooks.acme.com", "https://hooks.acme.com/"],
    ["https://hooks.acme.com", "https://hooks.acme.com/any/path?query=1"],
    // Host names are compared as URLs read them: case folded.
    ["https://HOOKS.Acme.com", "https://hooks.acme.COM/x"],
    // A default port is the same origin, written or not.
    ["https://hooks.acme.com:443", "https://hooks.acme.com/x"],
    ["https://hooks.acme.com", "https://hooks.acme.com:443/x"],
    ["http://hooks.acme.com:80/cb", "http://hooks.acme.com/cb/1"],
    ["https://hooks.acme.com:8443/", "https://hooks.acme.com:8443/x"],
    // The path on segment boundaries, a trailing slash on either side insignificant.
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/"],
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hooks/x"],
    ["https://hooks.acme.com/hooks/", "https://hooks.acme.com/hooks"],
    ["https://hooks.acme.com/hooks/", "https://hooks.acme.com/hooks/a/b?c=d"],
    ["https://hooks.acme.com/a/b", "https://hooks.acme.com/a/b/c"],
    // Percent-encoded unreserved characters are the characters themselves (RFC 3986 §6.2.2.2).
    ["https://hooks.acme.com/hooks", "https://hooks.acme.com/hook%73/x"],
    ["https://hooks.acme.com/hook%73", "https://hooks.acme.com/hooks/x"],
    ["https://hooks.acme.com/caf%C3%A9", "https://hooks.acme.com/caf%c3%a9/x"],
    ["https://hooks.acme.com/café", "https://hooks.acme.com/caf%C3%A9/x"],
    ["http://[::1]:8080/cb", "http://[0:0:0:0:0:0:0:1]:8080/cb/x"],
    ["*", "https://anything.example/at/all"],
  ])("%s admits %s", (prefix, callback) => {
    expect(admits(prefix, callback)).toBe(true);
  });

  it("admits a callback any one of the prefixes admits", () => {
    const prefixes = ["https://a.example/one", "https://b.example/two/"];
    expect(isRegistered(new URL("https://b.example/two/x"), prefixes)).toBe(true);
    expect(isRegistered(new URL("https://a.example/two/x"), prefixes)).toBe(false);
  });

  it("reads a stored prefix that registration would refuse as admitting nothing", () => {
    // Stored by an earlier version, which checked only the scheme and the absence of spaces.
    expect(admits("https://hooks.acme.com/cb?tenant=", "https://hooks.acme.com/cb?tenant=1")).toBe(false);
    expect(admits("https://user@hooks.acme.com/", "https://hooks.acme.com/x")).toBe(false);
    expect(admits("https://", "https://hooks.acme.com/")).toBe(false);
  });
});

describe("registering prefixes", () => {
  const refusal = (values: string[]) => {
    try {
      parsePrefixes(values);
    } catch (error) {
      return error;
    }
    return undefined;
  };

  it.each([
    ["hooks.acme.com", "absolute"],
    ["ftp://hooks.acme.com/", "http"],
    ["https://", "absolute"],
    ["https://user:pw@hooks.acme.com/", "credentials"],
    ["https://hooks.acme.com@evil.net/", "credentials"],
    ["https://hooks.acme.com/cb?tenant=", "query"],
    ["https://hooks.acme.com/cb?", "query"],
    ["https://hooks.acme.com/#x", "fragment"],
    ["https://hooks.acme.com/a b", "space"],
    ["https://hooks.acme.com/a\tb", "space"],
    ["https://hooks.acme.com/a\nb", "space"],
  ])("refuses %j with VALIDATION_FAILED naming it", (prefix, why) => {
    const error = refusal(["https://fine.example/", prefix]);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: "VALIDATION_FAILED" });
    const errors = (error as AppError).errors!;
    expect(errors).toEqual([{ field: "callbackPrefixes[1]", message: expect.stringContaining(why) }]);
  });

  it("refuses a prefix longer than a callback may be", () => {
    const error = refusal([`https://hooks.acme.com/${"a".repeat(2_100)}`]);
    expect(error).toMatchObject({ code: "VALIDATION_FAILED" });
    expect((error as AppError).errors).toEqual([
      { field: "callbackPrefixes[0]", message: expect.stringContaining("2048") },
    ]);
  });

  it("accepts http(s) origins and paths, and keeps them as written", () => {
    const prefixes = ["*", "https://hooks.acme.com", "http://127.0.0.1:8080/cb/", "https://HOOKS.acme.com:443/a%2Fb"];
    expect(parsePrefixes(prefixes)).toEqual(prefixes);
  });

  it("refuses a bad BOOTSTRAP_CALLBACK_PREFIXES entry at start, naming the setting", () => {
    expect(() => loadConfig({ BOOTSTRAP_CALLBACK_PREFIXES: "https://hooks.acme.com/?x=1" })).toThrow(ConfigError);
    expect(() => loadConfig({ BOOTSTRAP_CALLBACK_PREFIXES: "https://hooks.acme.com/?x=1" })).toThrow(/query/);
    expect(loadConfig({ BOOTSTRAP_CALLBACK_PREFIXES: "https://hooks.acme.com, *" }).bootstrap.callbackPrefixes).toEqual(
      ["https://hooks.acme.com", "*"],
    );
  });
});

describe("callback prefixes over the server", () => {
  const disposers = new Disposers();
  let app: App;
  let url: string;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };

  beforeAll(async () => {
    receiver = await startReceiver();
    disposers.add(() => receiver.close());
    ({ app, url } = await startApp("pglite", disposers, { RATE_LIMIT_PER_SECOND: "0" }));
  });
  afterAll(() => disposers.disposeAll());

  const clientWith = async (prefixes: string[]) => {
    const { clientId } = await app.services.clients.createClient({ name: "prefixes", callbackPrefixes: prefixes });
    const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
    return { clientId, key };
  };
  const subscribe = (key: string, callback: string) =>
    getJson(`${url}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ awb: "020-12345675", callback, states: "*" }),
    });

  it("answers 403 CALLBACK_NOT_REGISTERED for a host that merely starts with the registered one", async () => {
    const { key } = await clientWith(["https://hooks.acme.com"]);
    for (const callback of [
      "https://hooks.acme.com.evil.net/",
      "https://hooks.acme.com.evil.net/hooks",
      "https://hooks.acme.community/",
      "https://hooks.acme.com:8443/",
      "http://hooks.acme.com/",
    ]) {
      const answer = await subscribe(key, callback);
      expect({ callback, status: answer.status, code: answer.body.code }).toEqual({
        callback,
        status: 403,
        code: "CALLBACK_NOT_REGISTERED",
      });
    }
    // Credentials in the callback (the userinfo trick) are refused before prefixes are looked at.
    const userinfo = await subscribe(key, "https://hooks.acme.com@evil.net/");
    expect(userinfo).toMatchObject({ status: 422, body: { code: "CALLBACK_INVALID" } });
  });

  it("admits a path prefix's own segment and what is under it, and nothing beside it", async () => {
    const { key } = await clientWith([`${receiver.url}/ok/hooks`]);
    for (const callback of [
      `${receiver.url}/ok/hooks-evil`,
      `${receiver.url}/ok/hooksx/a`,
      `${receiver.url}/ok/HOOKS/a`,
      `${receiver.url}/ok/hooks/..%2Fevil`,
      `${receiver.url.replace(/:\d+$/, ":9")}/ok/hooks/a`,
    ]) {
      const answer = await subscribe(key, callback);
      expect({ callback, status: answer.status, code: answer.body.code }).toEqual({
        callback,
        status: 403,
        code: "CALLBACK_NOT_REGISTERED",
      });
    }
    for (const callback of [`${receiver.url}/ok/hooks`, `${receiver.url}/ok/hooks/`, `${receiver.url}/ok/hooks/a/b`]) {
      const answer = await subscribe(key, callback);
      expect({ callback, status: answer.status }).toEqual({ callback, status: 201 });
    }
  });

  it("keeps prefixes stored before registration checked them working, and one it cannot read admits nothing", async () => {
    const { clientId, key } = await clientWith(["https://placeholder.example/"]);
    // As an earlier version stored them: not checked beyond the scheme.
    await app.database.prisma.client.update({
      where: { id: clientId },
      data: { callbackPrefixes: [`${receiver.url}/ok/stored/`, `${receiver.url}/ok/cb?tenant=`] },
    });
    expect((await subscribe(key, `${receiver.url}/ok/stored/x`)).status).toBe(201);
    const unreadable = await subscribe(key, `${receiver.url}/ok/cb?tenant=1`);
    expect(unreadable).toMatchObject({ status: 403, body: { code: "CALLBACK_NOT_REGISTERED" } });
  });

  it("refuses a bad prefix where prefixes are registered (GraphQL) with VALIDATION_FAILED, changing nothing", async () => {
    const { clientId } = await clientWith(["https://hooks.acme.com/"]);
    const set = await graphql(
      url,
      `mutation { setCallbackPrefixes(clientId: "${clientId}", prefixes: ["https://hooks.acme.com/ok", "https://hooks.acme.com@evil.net/"]) }`,
      undefined,
      admin,
    );
    expect(set.errors?.[0]).toMatchObject({
      extensions: {
        code: "VALIDATION_FAILED",
        errors: [{ field: "callbackPrefixes[1]", message: expect.stringContaining("credentials") }],
      },
    });
    const row = await app.database.prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(row.callbackPrefixes).toEqual(["https://hooks.acme.com/"]);

    const before = await app.database.prisma.client.count();
    const created = await graphql(
      url,
      `
        mutation {
          createClient(name: "bad prefixes", callbackPrefixes: ["https://hooks.acme.com/cb?x=1"]) {
            clientId
          }
        }
      `,
      undefined,
      admin,
    );
    expect(created.errors?.[0]).toMatchObject({ extensions: { code: "VALIDATION_FAILED" } });
    expect(await app.database.prisma.client.count()).toBe(before);
  });
});
