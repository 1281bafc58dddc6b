import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { CryptoKey, JWK, JWTPayload } from "jose" with { "resolution-mode": "import" };
import type { Disposers } from "./harness";

/** One signing key of the issuer: its key id, private key and published (public) JWK. */
interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

export interface TokenOptions {
  /** Seconds from now; negative: already expired; null: no `exp` claim. Default 300. */
  readonly expiresInSeconds?: number | null;
  readonly issuer?: string;
  /** Sign with this key instead of the issuer's current one (a key it never published). */
  readonly key?: SigningKey;
  /** The `kid` header, when it must differ from the signing key's own. */
  readonly kid?: string;
}

export interface OidcIssuer {
  /** The issuer identifier (`iss`) and where its key set is served, on loopback. */
  readonly issuer: string;
  readonly jwksUrl: string;
  /** A signed access token with these claims (`iss`, `iat`, `exp` added unless given in `options`). */
  token(claims: JWTPayload, options?: TokenOptions): Promise<string>;
  /** A new current signing key with a new kid; the key set then holds only it (the old key withdrawn). */
  rotate(): Promise<void>;
  /** A key this issuer never publishes, to sign a forged token. */
  foreignKey(kid?: string): Promise<SigningKey>;
  /** While false, every request for the key set is answered 503 (an issuer that is down). Default true. */
  setAvailable(available: boolean): void;
  /** How many times the key set was asked for, answered or not. */
  fetches(): number;
  /** The OAuth 2.0 token endpoint (`/token`): client-credentials grants for the clients `addClient` registered. */
  readonly tokenUrl: string;
  /**
   * Registers a client of the token endpoint; its tokens are this issuer's JWTs with `sub` the client
   * id, `aud` the request's `audience` when given, `scope` the request's, and these extra claims (a
   * `logistics_agent_uri`, say), valid for `tokenLifetimeSeconds`.
   */
  addClient(clientId: string, secret: string, claims?: JWTPayload): void;
  /** The token endpoint's requests so far, answered or not, oldest first. */
  tokenRequests(): readonly TokenRequest[];
  /** The access tokens the token endpoint issued, oldest first. */
  issuedTokens(): readonly string[];
  /**
   * How the token endpoint answers from now on: `ok` (tokens; the default), `unavailable` (503),
   * `hang` (never), `invalid` (200 without an access_token). `expiresInSeconds`: the `expires_in` of
   * its tokens (default 300; null: none given).
   */
  setTokenEndpoint(mode: "ok" | "unavailable" | "hang" | "invalid" | "huge", expiresInSeconds?: number | null): void;
}

/** One request to the issuer's token endpoint, as it came. */
export interface TokenRequest {
  readonly authorization: string | undefined;
  readonly contentType: string | undefined;
  /** The form's fields. */
  readonly form: Readonly<Record<string, string>>;
  /** The client it authenticated as, if any. */
  readonly clientId: string | undefined;
}

/** An OpenID Connect issuer's key set served over HTTP on 127.0.0.1, with keys the test generates (ES256). */
export async function startOidcIssuer(disposers: Disposers): Promise<OidcIssuer> {
  const jose = await import("jose");
  let serial = 0;
  const newKey = async (kid = `key-${++serial}`): Promise<SigningKey> => {
    const { privateKey, publicKey } = await jose.generateKeyPair("ES256", { extractable: true });
    return { kid, privateKey, jwk: { ...(await jose.exportJWK(publicKey)), kid, alg: "ES256", use: "sig" } };
  };
  let current = await newKey();
  let fetchCount = 0;
  let available = true;
  const clients = new Map<string, { secret: string; claims: JWTPayload }>();
  const tokenRequests: TokenRequest[] = [];
  const issued: string[] = [];
  let tokenMode: "ok" | "unavailable" | "hang" | "invalid" | "huge" = "ok";
  let tokenLifetime: number | null = 300;
  const hanging = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    if (request.url === "/token" && request.method === "POST") {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => void answerToken(request.headers, body, response));
      return;
    }
    if (request.url !== "/jwks") {
      response.writeHead(404).end();
      return;
    }
    fetchCount++;
    if (!available) {
      response.writeHead(503, { "retry-after": "30" }).end();
      return;
    }
    response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [current.jwk] }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  disposers.add(
    () =>
      new Promise<void>((resolve) => {
        for (const response of hanging) response.destroy();
        server.close(() => resolve());
      }),
  );
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/issuer`;

  /** The client a request authenticates as: HTTP Basic (RFC 6749 §2.3.1, form-encoded parts) or client_id/client_secret in the form. */
  function authenticate(authorization: string | undefined, form: URLSearchParams): string | undefined {
    let id: string | undefined;
    let secret: string | undefined;
    const basic = /^Basic (.+)$/i.exec(authorization ?? "");
    if (basic) {
      const decoded = Buffer.from(basic[1]!, "base64").toString();
      const colon = decoded.indexOf(":");
      const part = (text: string) => decodeURIComponent(text.replace(/\+/g, " "));
      [id, secret] = [part(decoded.slice(0, colon)), part(decoded.slice(colon + 1))];
    } else [id, secret] = [form.get("client_id") ?? undefined, form.get("client_secret") ?? undefined];
    return id !== undefined && clients.get(id)?.secret === secret ? id : undefined;
  }

  async function answerToken(headers: IncomingHttpHeaders, body: string, response: ServerResponse): Promise<void> {
    const form = new URLSearchParams(body);
    const clientId = authenticate(headers.authorization, form);
    tokenRequests.push({
      authorization: headers.authorization,
      contentType: headers["content-type"],
      form: Object.fromEntries(form),
      clientId,
    });
    const json = (status: number, value: unknown): void => {
      response
        .writeHead(status, { "content-type": "application/json", "cache-control": "no-store" })
        .end(JSON.stringify(value));
    };
    if (tokenMode === "hang") return void hanging.add(response);
    if (tokenMode === "unavailable") return json(503, { error: "temporarily_unavailable" });
    if (form.get("grant_type") !== "client_credentials") return json(400, { error: "unsupported_grant_type" });
    if (clientId === undefined) return json(401, { error: "invalid_client" });
    if (tokenMode === "invalid") return json(200, { token_type: "Bearer" });
    if (tokenMode === "huge") return json(200, { token_type: "Bearer", access_token: "x".repeat(200_000) });
    const audience = form.get("audience");
    const scope = form.get("scope");
    const now = Math.floor(Date.now() / 1000);
    const jwt = new jose.SignJWT({
      ...clients.get(clientId)!.claims,
      sub: clientId,
      ...(audience ? { aud: audience } : {}),
      ...(scope ? { scope } : {}),
      jti: `token-${issued.length + 1}`,
    })
      .setProtectedHeader({ alg: "ES256", kid: current.kid })
      .setIssuer(issuer)
      .setIssuedAt(now)
      .setExpirationTime(now + (tokenLifetime ?? 300));
    const token = await jwt.sign(current.privateKey);
    issued.push(token);
    json(200, {
      access_token: token,
      token_type: "Bearer",
      ...(tokenLifetime === null ? {} : { expires_in: tokenLifetime }),
    });
  }

  return {
    issuer,
    jwksUrl: `${origin}/jwks`,
    async token(claims, options = {}) {
      const key = options.key ?? current;
      const now = Math.floor(Date.now() / 1000);
      const jwt = new jose.SignJWT(claims)
        .setProtectedHeader({ alg: "ES256", kid: options.kid ?? key.kid })
        .setIssuer(options.issuer ?? issuer)
        .setIssuedAt(now);
      if (options.expiresInSeconds !== null) jwt.setExpirationTime(now + (options.expiresInSeconds ?? 300));
      return jwt.sign(key.privateKey);
    },
    async rotate() {
      current = await newKey();
    },
    foreignKey: (kid) => newKey(kid),
    setAvailable(value) {
      available = value;
    },
    fetches: () => fetchCount,
    tokenUrl: `${origin}/token`,
    addClient(clientId, secret, claims = {}) {
      clients.set(clientId, { secret, claims });
    },
    tokenRequests: () => tokenRequests,
    issuedTokens: () => issued,
    setTokenEndpoint(mode, expiresInSeconds = 300) {
      tokenMode = mode;
      tokenLifetime = expiresInSeconds;
    },
  };
}
