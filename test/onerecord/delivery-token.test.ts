import { ConfigError, loadConfig } from "../../src/config";
import {
  createTokenClient,
  MAX_TOKEN_ANSWER_BYTES,
  REFRESH_AFTER_401_MS,
  TokenEndpointError,
  type TokenSettings,
} from "../../src/outbound/token-client";
import { Disposers } from "../support/harness";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";

/**
 * The client-credentials token client of ONE Record notifications (outbound/token-client.ts) against
 * a real token endpoint on loopback (test/support/oidc-issuer.ts), and its settings.
 */
describe("the ONE Record notifications' token client", () => {
  const disposers = new Disposers();
  let issuer: OidcIssuer;
  // A client id and secret with characters RFC 6749 §2.3.1 form-encodes before HTTP Basic.
  const ID = "gateway client:1";
  const SECRET = "s3cret+/=:&é";
  beforeAll(async () => {
    issuer = await startOidcIssuer(disposers);
    issuer.addClient(ID, SECRET, { logistics_agent_uri: "https://carrier.test/logistics-objects/carrier" });
  });
  afterAll(() => disposers.disposeAll());
  beforeEach(() => issuer.setTokenEndpoint("ok"));

  const settings = (more: Partial<TokenSettings> = {}): TokenSettings => ({
    url: issuer.tokenUrl,
    clientId: ID,
    clientSecret: SECRET,
    scope: undefined,
    audience: undefined,
    ...more,
  });
  const requestsSince = (before: number) => issuer.tokenRequests().slice(before);

  it("asks with HTTP Basic and grant_type=client_credentials (scope and audience when set), and answers the endpoint's bearer token", async () => {
    const before = issuer.tokenRequests().length;
    const outcomes: string[] = [];
    const client = createTokenClient(settings({ scope: "notifications", audience: "https://subscriber.test" }), {
      onRequest: (outcome) => outcomes.push(outcome),
    });
    const token = await client.token();
    expect(token).toBe(issuer.issuedTokens().at(-1));
    expect(requestsSince(before)).toEqual([
      {
        authorization: expect.stringMatching(/^Basic /),
        contentType: "application/x-www-form-urlencoded",
        form: { grant_type: "client_credentials", scope: "notifications", audience: "https://subscriber.test" },
        clientId: ID,
      },
    ]);
    expect(outcomes).toEqual(["ok"]);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ sub: ID, aud: "https://subscriber.test", iss: issuer.issuer });
  });

  it("remembers the token until its expires_in less the margin (half a short lifetime), then asks again", async () => {
    let now = 1_000_000;
    issuer.setTokenEndpoint("ok", 40); // the margin is then 20 s, half of it
    const client = createTokenClient(settings(), { now: () => now });
    const before = issuer.tokenRequests().length;
    const first = await client.token();
    now += 19_000;
    expect(await client.token()).toBe(first);
    expect(requestsSince(before)).toHaveLength(1);
    now += 1_000;
    const second = await client.token();
    expect(second).not.toBe(first);
    expect(requestsSince(before)).toHaveLength(2);

    issuer.setTokenEndpoint("ok", null); // no expires_in: used for 60 s, less 30 s
    const unstated = createTokenClient(settings(), { now: () => now });
    const third = await unstated.token();
    now += 29_000;
    expect(await unstated.token()).toBe(third);
    now += 1_000;
    expect(await unstated.token()).not.toBe(third);
  });

  it("shares one request among concurrent callers", async () => {
    const client = createTokenClient(settings());
    const before = issuer.tokenRequests().length;
    const tokens = await Promise.all(Array.from({ length: 25 }, () => client.token()));
    expect(new Set(tokens).size).toBe(1);
    expect(requestsSince(before)).toHaveLength(1);
  });

  it("forgets a token a receiver refused, but not one that has replaced it already", async () => {
    const client = createTokenClient(settings());
    const first = await client.token();
    client.invalidate(first);
    const second = await client.token();
    expect(second).not.toBe(first);
    client.invalidate(first); // a late 401 for the old token
    expect(await client.token()).toBe(second);
  });

  it("forgets a token for a 401 at most once per REFRESH_AFTER_401_MS per audience: a receiver answering 401 to everything makes a bounded number of token requests", async () => {
    let now = 5_000_000;
    const client = createTokenClient(settings(), { now: () => now });
    const before = issuer.tokenRequests().length;
    const first = await client.token();
    // A genuine refusal (say, the token expired early) is acted on once: a new token is fetched.
    expect(client.invalidate(first)).toBe(true);
    const second = await client.token();
    expect(second).not.toBe(first);
    // A receiver that refuses every token: 50 more 401s within the interval forget nothing.
    for (let i = 0; i < 50; i++) {
      now += 100;
      expect(client.invalidate(await client.token())).toBe(false);
    }
    expect(await client.token()).toBe(second);
    expect(requestsSince(before)).toHaveLength(2);
    // After the interval, a 401 is acted on again (once).
    now += REFRESH_AFTER_401_MS;
    expect(client.invalidate(second)).toBe(true);
    expect(await client.token()).not.toBe(second);
    expect(requestsSince(before)).toHaveLength(3);
  });

  it("keeps one token per audience: each asked with its audience, never handed out for another, and a 401 for one leaves the others", async () => {
    const client = createTokenClient(settings({ audience: "https://default.test" }));
    const before = issuer.tokenRequests().length;
    const [x, y, fallback] = await Promise.all([
      client.token(undefined, "https://x.test"),
      client.token(undefined, "https://y.test"),
      client.token(),
    ]);
    const audienceOf = (token: string) =>
      (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { aud: unknown }).aud;
    expect([audienceOf(x), audienceOf(y), audienceOf(fallback)]).toEqual([
      "https://x.test",
      "https://y.test",
      "https://default.test",
    ]);
    expect(
      requestsSince(before)
        .map((r) => r.form.audience)
        .sort(),
    ).toEqual(["https://default.test", "https://x.test", "https://y.test"]);
    expect(await client.token(undefined, "https://x.test")).toBe(x);
    // x's token refused for y's audience: not y's token, nothing forgotten.
    expect(client.invalidate(x, "https://y.test")).toBe(false);
    expect(client.invalidate(x, "https://x.test")).toBe(true);
    expect(await client.token(undefined, "https://y.test")).toBe(y);
    expect(await client.token()).toBe(fallback);
    expect(await client.token(undefined, "https://x.test")).not.toBe(x);
  });

  it("fails with a TokenEndpointError saying why, and remembers no failure: the next caller asks again", async () => {
    const outcomes: string[] = [];
    const client = createTokenClient(settings(), { onRequest: (outcome) => outcomes.push(outcome) });
    issuer.setTokenEndpoint("unavailable");
    await expect(client.token()).rejects.toThrow(
      new TokenEndpointError("the token endpoint answered HTTP 503 (temporarily_unavailable)"),
    );
    issuer.setTokenEndpoint("invalid");
    await expect(client.token()).rejects.toThrow("the token endpoint's answer holds no access_token");
    // An answer past MAX_TOKEN_ANSWER_BYTES is not read on: no endpoint makes the gateway buffer without bound.
    issuer.setTokenEndpoint("huge");
    await expect(client.token()).rejects.toThrow(
      `the token endpoint's answer: its answer is over ${MAX_TOKEN_ANSWER_BYTES} bytes`,
    );
    issuer.setTokenEndpoint("ok");
    await expect(createTokenClient(settings({ clientSecret: "wrong" })).token()).rejects.toThrow(
      "the token endpoint answered HTTP 401 (invalid_client)",
    );
    expect(await client.token()).toBe(issuer.issuedTokens().at(-1));
    expect(outcomes).toEqual(["failed", "failed", "failed", "ok"]);
    await expect(createTokenClient(settings({ url: "http://127.0.0.1:9/token" })).token()).rejects.toThrow(
      "the token endpoint: ECONNREFUSED",
    );
  });

  it("lets a caller stop waiting for a token endpoint that does not answer (its attempt's time is up)", async () => {
    issuer.setTokenEndpoint("hang");
    const client = createTokenClient(settings());
    await expect(client.token(AbortSignal.timeout(50))).rejects.toThrow(
      "no token from the token endpoint in the attempt's time",
    );
  });
});

describe("the token settings", () => {
  const all = {
    ONE_RECORD_TOKEN_URL: "https://idp.carrier.example/oauth/token",
    ONE_RECORD_CLIENT_ID: "gateway",
    ONE_RECORD_CLIENT_SECRET: "s3cret",
  };

  it("are off when none is set, and read when the URL, id and secret are, with scope and audience", () => {
    expect(loadConfig({}).oneRecord.notificationToken).toBeUndefined();
    expect(
      loadConfig({ ...all, ONE_RECORD_TOKEN_SCOPE: "onerecord", ONE_RECORD_TOKEN_AUDIENCE: "https://1r.example" })
        .oneRecord.notificationToken,
    ).toEqual({
      url: all.ONE_RECORD_TOKEN_URL,
      clientId: "gateway",
      clientSecret: "s3cret",
      scope: "onerecord",
      audience: "https://1r.example",
    });
  });

  it("refuse the URL, id and secret apart, or a scope or audience without them, naming what is missing", () => {
    expect(() => loadConfig({ ONE_RECORD_TOKEN_URL: all.ONE_RECORD_TOKEN_URL })).toThrow(
      new ConfigError(
        "ONE_RECORD_TOKEN_URL",
        "needs ONE_RECORD_CLIENT_ID and ONE_RECORD_CLIENT_SECRET: ONE_RECORD_TOKEN_URL, ONE_RECORD_CLIENT_ID and ONE_RECORD_CLIENT_SECRET are set together",
      ),
    );
    expect(() => loadConfig({ ...all, ONE_RECORD_CLIENT_SECRET: " " })).toThrow(/needs ONE_RECORD_CLIENT_SECRET:/);
    expect(() => loadConfig({ ONE_RECORD_TOKEN_SCOPE: "x" })).toThrow(
      /^Invalid configuration: ONE_RECORD_TOKEN_SCOPE needs/,
    );
    expect(() => loadConfig({ ...all, ONE_RECORD_TOKEN_URL: "ftp://idp/token" })).toThrow(ConfigError);
  });
});
