import { ISSUER_KEYS_FAILURE_COOLDOWN_MS, ISSUER_KEYS_MAX_AGE_MS } from "../../src/onerecord/identity/issuer-keys";
import { setWallClock } from "../support/clock";
import { ADMIN_KEY, BEHAVIOUR_BACKENDS, describeBackend, Disposers, startApp } from "../support/harness";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer";
import { assertConforms } from "../support/onerecord-conformance";
import { oneRecord } from "../support/onerecord-requests";

/**
 * Who may call the ONE Record API, over HTTP: API keys, and OIDC access tokens from an issuer this
 * test serves on loopback (ONE_RECORD_OIDC_*), told apart by their shape.
 */
const AGENT = "https://1r.forwarder.example/logistics-objects/organization-forwarder";
const AUDIENCE = "https://1r.carrier.example";

describe.each(BEHAVIOUR_BACKENDS)("ONE Record callers on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let issuer: OidcIssuer;
    let base: string;

    beforeAll(async () => {
      issuer = await startOidcIssuer(disposers);
      const { url } = await startApp(backend, disposers, {
        ONE_RECORD_OIDC_ISSUER: issuer.issuer,
        ONE_RECORD_OIDC_JWKS_URL: issuer.jwksUrl,
        ONE_RECORD_OIDC_AUDIENCE: AUDIENCE,
      });
      base = `${url}/onerecord`;
    });
    afterAll(() => disposers.disposeAll());

    const claims = { logistics_agent_uri: AGENT, aud: AUDIENCE, scope: "events:read" };

    it("answers an API key and a valid access token", async () => {
      expect((await oneRecord(`${base}/`, { token: ADMIN_KEY })).status).toBe(200);
      const res = await oneRecord(`${base}/`, { token: await issuer.token(claims) });
      expect(res.status).toBe(200);
      await assertConforms(res.body);
    });

    it.each([
      ["expired", () => issuer.token(claims, { expiresInSeconds: -600 }), "The access token has expired"],
      [
        "from another issuer",
        () => issuer.token(claims, { issuer: "https://idp.elsewhere.example" }),
        `The access token was not issued by ${"<issuer>"}`,
      ],
      [
        "without the agent claim",
        () => issuer.token({ aud: AUDIENCE, sub: "someone" }),
        "The access token has no logistics_agent_uri claim",
      ],
      [
        "for another audience",
        () => issuer.token({ ...claims, aud: "https://someone.else" }),
        `The access token's audience (aud) does not include ${AUDIENCE}`,
      ],
      [
        "with a bad signature",
        async () => issuer.token(claims, { key: await issuer.foreignKey("key-1") }),
        "The access token's signature does not verify with the issuer's key",
      ],
    ])("refuses a token %s with a 401 api:Error saying which check failed", async (_case, make, message) => {
      const token = await make();
      const res = await oneRecord(`${base}/`, { token });
      expect(res.status).toBe(401);
      expect(res.headers.get("content-type")).toBe("application/ld+json; version=2.3.0");
      expect(res.body).toMatchObject({
        "@type": "api:Error",
        "api:hasTitle": "Not authenticated or expired token",
        "api:hasErrorDetail": [
          {
            "@type": "api:ErrorDetail",
            "api:hasCode": "401",
            "api:hasMessage": `UNAUTHENTICATED: ${message.replace("<issuer>", issuer.issuer)}`,
          },
        ],
      });
      expect(res.text).not.toContain(token.split(".")[1]);
      await assertConforms(res.body);
    });

    it("refuses an unknown API key and a request without credentials with 401", async () => {
      const unknown = await oneRecord(`${base}/`, { token: "cgw_this-key-was-never-issued-0001" });
      expect(unknown.status).toBe(401);
      expect(unknown.body["api:hasErrorDetail"][0]["api:hasMessage"]).toBe(
        "UNAUTHENTICATED: The API key is unknown or revoked",
      );
      const none = await oneRecord(`${base}/`);
      expect(none.status).toBe(401);
      await assertConforms(none.body);
    });

    it("answers 503 with Retry-After while the issuer's keys cannot be fetched, without asking it again until the cooldown is over", async () => {
      const keysTooOld = Date.now() + ISSUER_KEYS_MAX_AGE_MS + 1;
      setWallClock(keysTooOld);
      issuer.setAvailable(false);
      try {
        const fetches = issuer.fetches();
        const token = await issuer.token(claims);
        for (let i = 0; i < 2; i++) {
          const res = await oneRecord(`${base}/`, { token });
          expect(res.status).toBe(503);
          expect(res.headers.get("retry-after")).toBe(String(ISSUER_KEYS_FAILURE_COOLDOWN_MS / 1000));
          expect(res.body["api:hasErrorDetail"][0]["api:hasMessage"]).toBe(
            "SERVICE_UNAVAILABLE: The OIDC issuer's signing keys could not be fetched",
          );
          expect(res.text).not.toContain(token.split(".")[1]);
          await assertConforms(res.body);
        }
        expect(issuer.fetches()).toBe(fetches + 1);

        issuer.setAvailable(true);
        jest.setSystemTime(keysTooOld + ISSUER_KEYS_FAILURE_COOLDOWN_MS);
        expect((await oneRecord(`${base}/`, { token })).status).toBe(200);
        expect(issuer.fetches()).toBe(fetches + 2);
      } finally {
        jest.useRealTimers();
        issuer.setAvailable(true);
      }
    });
  });
});
