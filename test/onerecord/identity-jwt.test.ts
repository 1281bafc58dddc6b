import { AppError } from "../../src/errors";
import { createAuthFailureBudget } from "../../src/http/auth-failures";
import { createRateLimiter } from "../../src/http/rate-limit";
import { createOneRecordCallers, type OneRecordCallers } from "../../src/onerecord/identity/caller";
import { createJwtVerifier, type OidcSettings } from "../../src/onerecord/identity/jwt-verifier";
import { ISSUER_KEYS_FAILURE_COOLDOWN_MS, type IssuerKeyTimings } from "../../src/onerecord/identity/issuer-keys";
import { createOneRecordUris } from "../../src/onerecord/uris";
import { setWallClock } from "../support/clock";
import { Disposers } from "../support/harness";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";

/**
 * ONE Record callers presenting OIDC access tokens, verified against a key set an issuer serves on
 * loopback with keys this test generates.
 */
const BASE = "https://1r.carrier.example/onerecord";
const AGENT = "https://1r.forwarder.example/logistics-objects/organization-forwarder";
const ADDRESS = "192.0.2.10";
const uris = createOneRecordUris(() => BASE);

const disposers = new Disposers();
let issuer: OidcIssuer;
beforeAll(async () => {
  issuer = await startOidcIssuer(disposers);
});
afterAll(() => disposers.disposeAll());

/** The resolver as the plugin gets it, with a fresh failure budget (`failuresBurst` refused tokens per address). */
function callers(
  options: { audience?: string; timings?: IssuerKeyTimings; jwksUrl?: string; failuresBurst?: number } = {},
): OneRecordCallers {
  const oidc: OidcSettings = {
    issuer: issuer.issuer,
    jwksUrl: options.jwksUrl ?? issuer.jwksUrl,
    audience: options.audience,
  };
  const limiter = createRateLimiter({ perSecond: 100, burst: 100 });
  return createOneRecordCallers({
    authenticateApiKey: () => Promise.reject(new Error("an access token must not reach the API key lookup")),
    organizationUri: (id) => uris.objectUri(id),
    agents: {
      verify: createJwtVerifier(oidc, options.timings ?? { refetchCooldownMs: 0 }),
      failures: createAuthFailureBudget({ perSecond: 1, burst: options.failuresBurst ?? 100 }),
      takeRequest: (key) => limiter.take(key),
      localIdOf: (uri) => uris.localIdOf(uri),
    },
  });
}

const bearer = (token: string) => `Bearer ${token}`;

/** The AppError a resolution fails with. */
async function refusal(resolution: Promise<unknown>): Promise<AppError> {
  const error: unknown = await resolution.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw new Error(`expected an AppError, got ${String(error)}`);
  return error;
}

describe("OIDC access tokens", () => {
  it("accepts a valid token: the agent is its own Organization, with the scopes its scope claim names", async () => {
    const token = await issuer.token({ logistics_agent_uri: AGENT, scope: "openid events:read objects:write admin" });
    const caller = await callers().resolve(bearer(token), ADDRESS);
    expect(caller).toEqual({
      organizationId: AGENT,
      organizationUri: AGENT,
      agentUri: AGENT,
      agentExpiresAt: expect.any(Date),
      scopes: new Set(["events:read", "objects:write"]), // admin stays with API keys; openid is not ours
    });
  });

  it("takes the scopes of an scp list too", async () => {
    const token = await issuer.token({ logistics_agent_uri: AGENT, scp: ["events:write"] });
    expect((await callers().resolve(bearer(token), ADDRESS)).scopes).toEqual(new Set(["events:write"]));
  });

  it("an agent URI of this server is the Organization with that local id", async () => {
    const client = "organization-c0ffee00-0000-4000-8000-000000000001";
    const token = await issuer.token({ logistics_agent_uri: `${BASE}/logistics-objects/${client}` });
    const caller = await callers().resolve(bearer(token), ADDRESS);
    expect(caller.organizationId).toBe(client);
    expect(caller.organizationUri).toBe(`${BASE}/logistics-objects/${client}`);
  });

  it.each([
    "organization-carrier",
    "organization-c0ffee",
    "location-FRA",
    "waybill-020-12345675",
    "transport-movement-lh400-2026-10-16",
  ])(
    "refuses with 401 an agent URI of this server naming %s, which is no API client's Organization nor a created object",
    async (localId) => {
      const token = await issuer.token({
        logistics_agent_uri: `${BASE}/logistics-objects/${localId}`,
        scope: "objects:write",
      });
      const error = await refusal(callers().resolve(bearer(token), ADDRESS));
      expect(error.code).toBe("UNAUTHENTICATED");
      expect(error.message).toMatch(
        /logistics_agent_uri names an object of this server that is neither an API client's Organization nor one a caller created/,
      );
    },
  );

  it.each([
    ["expired", () => issuer.token({ logistics_agent_uri: AGENT }, { expiresInSeconds: -3600 }), /has expired/],
    [
      "from another issuer",
      () => issuer.token({ logistics_agent_uri: AGENT }, { issuer: "https://idp.elsewhere.example" }),
      /was not issued by http:\/\/127\.0\.0\.1:\d+\/issuer$/,
    ],
    ["without the agent claim", () => issuer.token({ sub: "someone" }), /has no logistics_agent_uri claim/],
    [
      "with an agent claim that is no URI",
      () => issuer.token({ logistics_agent_uri: "forwarder" }),
      /logistics_agent_uri claim is not an absolute http\(s\) URI/,
    ],
    [
      "not valid yet",
      () => issuer.token({ logistics_agent_uri: AGENT, nbf: Math.floor(Date.now() / 1000) + 3600 }),
      /not valid yet \(nbf\)/,
    ],
    [
      "signed with another key under the issuer's key id",
      async () => issuer.token({ logistics_agent_uri: AGENT }, { key: await issuer.foreignKey("key-1") }),
      /signature does not verify/,
    ],
    [
      "signed with a key the issuer does not publish",
      async () => issuer.token({ logistics_agent_uri: AGENT }, { key: await issuer.foreignKey("made-up") }),
      /not signed with a key the issuer publishes/,
    ],
  ])("refuses a token %s with 401 saying which check failed, never the token", async (_case, make, detail) => {
    const token = await make();
    const error = await refusal(callers().resolve(bearer(token), ADDRESS));
    expect(error.code).toBe("UNAUTHENTICATED");
    expect(error.status).toBe(401);
    expect(error.message).toMatch(detail);
    expect(error.message).not.toContain(token.split(".")[1]);
  });

  it("with an audience configured, refuses a token for another audience and accepts one for it", async () => {
    const resolver = callers({ audience: "https://1r.carrier.example" });
    const other = await issuer.token({ logistics_agent_uri: AGENT, aud: "https://someone.else" });
    expect((await refusal(resolver.resolve(bearer(other), ADDRESS))).message).toMatch(
      /audience \(aud\) does not include https:\/\/1r\.carrier\.example/,
    );
    const ours = await issuer.token({ logistics_agent_uri: AGENT, aud: ["x", "https://1r.carrier.example"] });
    expect((await resolver.resolve(bearer(ours), ADDRESS)).agentUri).toBe(AGENT);
  });

  it("refuses a token signed with a shared secret (HS256), whatever its kid", async () => {
    const jose = await import("jose");
    const token = await new jose.SignJWT({ logistics_agent_uri: AGENT })
      .setProtectedHeader({ alg: "HS256", kid: "key-1" })
      .setIssuer(issuer.issuer)
      .setExpirationTime("5m")
      .sign(new TextEncoder().encode("a secret anyone could have guessed"));
    expect((await refusal(callers().resolve(bearer(token), ADDRESS))).message).toMatch(
      /signature algorithm is not accepted/,
    );
  });

  it("refuses a token without an expiry", async () => {
    const token = await issuer.token({ logistics_agent_uri: AGENT }, { expiresInSeconds: null });
    expect((await refusal(callers().resolve(bearer(token), ADDRESS))).message).toBe(
      "The access token has no expiry (exp)",
    );
  });

  it("follows a key rotation: a token signed with the new kid is accepted, the withdrawn key's refused", async () => {
    const resolver = callers();
    const before = await issuer.token({ logistics_agent_uri: AGENT });
    await resolver.resolve(bearer(before), ADDRESS);
    const fetchesBefore = issuer.fetches();
    await issuer.rotate();
    const after = await issuer.token({ logistics_agent_uri: AGENT });
    expect((await resolver.resolve(bearer(after), ADDRESS)).agentUri).toBe(AGENT);
    expect(issuer.fetches()).toBe(fetchesBefore + 1);
    expect((await refusal(resolver.resolve(bearer(before), ADDRESS))).message).toMatch(
      /not signed with a key the issuer publishes/,
    );
  });

  it("keeps the key set: valid tokens do not fetch it again, unknown kids only once per cooldown", async () => {
    const resolver = callers({ timings: { refetchCooldownMs: 3_600_000 } });
    await resolver.resolve(bearer(await issuer.token({ logistics_agent_uri: AGENT })), ADDRESS);
    await resolver.resolve(bearer(await issuer.token({ logistics_agent_uri: AGENT })), ADDRESS);
    const fetches = issuer.fetches();
    for (const kid of ["made-up-1", "made-up-2"]) {
      const forged = await issuer.token({ logistics_agent_uri: AGENT }, { key: await issuer.foreignKey(kid) });
      expect((await refusal(resolver.resolve(bearer(forged), ADDRESS))).code).toBe("UNAUTHENTICATED");
    }
    expect(issuer.fetches()).toBe(fetches);
  });

  it("refused tokens spend the address's failure budget (429 once spent); valid ones give their attempt back", async () => {
    const resolver = callers({ failuresBurst: 2 });
    const valid = await issuer.token({ logistics_agent_uri: AGENT });
    const expired = await issuer.token({ logistics_agent_uri: AGENT }, { expiresInSeconds: -3600 });
    for (let i = 0; i < 3; i++) await resolver.resolve(bearer(valid), ADDRESS);
    expect((await refusal(resolver.resolve(bearer(expired), ADDRESS))).code).toBe("UNAUTHENTICATED");
    expect((await refusal(resolver.resolve(bearer(expired), ADDRESS))).code).toBe("UNAUTHENTICATED");
    expect((await refusal(resolver.resolve(bearer(valid), ADDRESS))).code).toBe("RATE_LIMITED");
    expect((await resolver.resolve(bearer(valid), "192.0.2.11")).agentUri).toBe(AGENT);
  });

  it("answers 503 when the issuer's keys cannot be fetched, without spending the failure budget", async () => {
    const resolver = callers({ jwksUrl: `${issuer.jwksUrl}-missing`, failuresBurst: 1 });
    const token = await issuer.token({ logistics_agent_uri: AGENT });
    for (let i = 0; i < 2; i++) {
      const error = await refusal(resolver.resolve(bearer(token), ADDRESS));
      expect(error.code).toBe("SERVICE_UNAVAILABLE");
      expect(error.message).toBe("The OIDC issuer's signing keys could not be fetched");
    }
  });

  describe("while the issuer is down", () => {
    const COOLDOWN_SECONDS = ISSUER_KEYS_FAILURE_COOLDOWN_MS / 1000;
    const CONCURRENT = 8;
    afterEach(() => {
      jest.useRealTimers();
      issuer.setAvailable(true);
    });

    /** What CONCURRENT requests with this token, sent at once, are refused with: [code, Retry-After seconds]. */
    const refusedAtOnce = async (resolver: OneRecordCallers, token: string) =>
      (
        await Promise.all(Array.from({ length: CONCURRENT }, () => refusal(resolver.resolve(bearer(token), ADDRESS))))
      ).map((error) => [error.code, error.retryAfterSeconds]);

    it("concurrent tokens share one fetch; the next are answered 503 without fetching until the cooldown is over", async () => {
      const resolver = callers();
      const start = Date.now();
      setWallClock(start);
      const token = await issuer.token({ logistics_agent_uri: AGENT });
      issuer.setAvailable(false);
      const fetches = issuer.fetches();

      const failed = await refusedAtOnce(resolver, token);
      expect(issuer.fetches()).toBe(fetches + 1);
      expect(failed).toEqual(Array(CONCURRENT).fill(["SERVICE_UNAVAILABLE", COOLDOWN_SECONDS]));

      jest.setSystemTime(start + ISSUER_KEYS_FAILURE_COOLDOWN_MS - 1);
      const coolingDown = await refusedAtOnce(resolver, token);
      expect(issuer.fetches()).toBe(fetches + 1);
      expect(coolingDown).toEqual(Array(CONCURRENT).fill(["SERVICE_UNAVAILABLE", 1]));

      jest.setSystemTime(start + ISSUER_KEYS_FAILURE_COOLDOWN_MS);
      const failedAgain = await refusedAtOnce(resolver, token);
      expect(issuer.fetches()).toBe(fetches + 2);
      expect(failedAgain).toEqual(Array(CONCURRENT).fill(["SERVICE_UNAVAILABLE", COOLDOWN_SECONDS]));

      issuer.setAvailable(true);
      jest.setSystemTime(start + 2 * ISSUER_KEYS_FAILURE_COOLDOWN_MS);
      const accepted = await Promise.all(
        Array.from({ length: CONCURRENT }, () => resolver.resolve(bearer(token), ADDRESS)),
      );
      expect(issuer.fetches()).toBe(fetches + 3);
      expect(accepted.map((caller) => caller.agentUri)).toEqual(Array(CONCURRENT).fill(AGENT));
    });

    it("keys already held keep verifying; only tokens that need a fetch wait out the cooldown", async () => {
      const resolver = callers();
      const start = Date.now();
      setWallClock(start);
      const held = await issuer.token({ logistics_agent_uri: AGENT });
      await resolver.resolve(bearer(held), ADDRESS);
      await issuer.rotate();
      const rotated = await issuer.token({ logistics_agent_uri: AGENT });
      issuer.setAvailable(false);
      const fetches = issuer.fetches();

      const failed = await refusedAtOnce(resolver, rotated);
      expect(issuer.fetches()).toBe(fetches + 1);
      expect(failed).toEqual(Array(CONCURRENT).fill(["SERVICE_UNAVAILABLE", COOLDOWN_SECONDS]));
      expect((await resolver.resolve(bearer(held), ADDRESS)).agentUri).toBe(AGENT);

      jest.setSystemTime(start + 1_000);
      const coolingDown = await refusedAtOnce(resolver, rotated);
      expect(issuer.fetches()).toBe(fetches + 1);
      expect(coolingDown).toEqual(Array(CONCURRENT).fill(["SERVICE_UNAVAILABLE", COOLDOWN_SECONDS - 1]));

      issuer.setAvailable(true);
      jest.setSystemTime(start + ISSUER_KEYS_FAILURE_COOLDOWN_MS);
      expect((await resolver.resolve(bearer(rotated), ADDRESS)).agentUri).toBe(AGENT);
      expect(issuer.fetches()).toBe(fetches + 2);
    });
  });

  it("refuses a request without credentials with 401", async () => {
    for (const header of [undefined, ""]) {
      const error = await refusal(callers().resolve(header, ADDRESS));
      expect([error.code, error.message]).toEqual([
        "UNAUTHENTICATED",
        "Send an API key or an access token as Authorization: Bearer <credential>",
      ]);
    }
  });
});

describe("without an OIDC issuer", () => {
  it("says that access tokens are not taken when a JWT comes where only API keys are", async () => {
    const resolver = createOneRecordCallers({
      authenticateApiKey: () => Promise.reject(new AppError("UNAUTHENTICATED", "The API key is unknown or revoked")),
      organizationUri: (id) => uris.objectUri(id),
    });
    const token = await issuer.token({ logistics_agent_uri: AGENT });
    expect((await refusal(resolver.resolve(bearer(token), ADDRESS))).message).toBe(
      "This server takes API keys only: it has no OIDC issuer configured for access tokens",
    );
    expect((await refusal(resolver.resolve("Bearer cgw_not-a-key-we-issued", ADDRESS))).message).toBe(
      "The API key is unknown or revoked",
    );
  });
});
