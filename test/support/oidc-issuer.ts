import { once } from "node:events";
import { createServer } from "node:http";
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
  const server = createServer((request, response) => {
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
  disposers.add(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = `${origin}/issuer`;
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
  };
}
