import type { JWTPayload } from "jose" with { "resolution-mode": "import" };
import { isScope, type Scope } from "../../clients/credentials";
import type { OneRecordSettings } from "../../config";
import { AppError } from "../../errors";
import {
  ISSUER_KEYS_FAILURE_COOLDOWN_MS,
  type IssuerKeyTimings,
  IssuerKeysUnavailable,
  issuerKeys,
} from "./issuer-keys";
import { loadJose } from "./jose-module";

/** What a verified access token says of its bearer. */
export interface AgentToken {
  /** The `logistics_agent_uri` claim: the agent's LogisticsAgent in its own ONE Record server. */
  readonly agentUri: string;
  readonly scopes: ReadonlySet<Scope>;
  /** The token's `exp`: what its scopes attest holds until then, not after. */
  readonly expiresAt: Date;
}

export type OidcSettings = NonNullable<OneRecordSettings["oidc"]>;

export const AGENT_CLAIM = "logistics_agent_uri";

/** Signatures with a public key only: a key set never holds a shared secret. */
const ALGORITHMS = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
];
/** Clocks of the issuer and this server may differ this much for `exp` and `nbf`. */
const CLOCK_TOLERANCE_SECONDS = 30;
/** Scopes an agent's token cannot carry: key and client administration stays with API keys. */
const API_KEY_ONLY_SCOPES: ReadonlySet<Scope> = new Set<Scope>(["admin"]);

/** Three base64url parts separated by dots; an API key ("cgw_…") has none. */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(credential);
}

/**
 * Verifies an OIDC access token: signed by one of the issuer's keys, `iss` the issuer, within `exp`
 * (required) and `nbf`, `aud` naming the audience when one is configured, and a `logistics_agent_uri`
 * claim. Refusals are UNAUTHENTICATED with the check that failed; the token is never echoed. An
 * issuer whose keys cannot be fetched is SERVICE_UNAVAILABLE: the token may well be valid.
 */
export function createJwtVerifier(
  oidc: OidcSettings,
  timings: IssuerKeyTimings = {},
): (token: string) => Promise<AgentToken> {
  const verifier = loadJose().then((jose) => ({ jose, keys: issuerKeys(jose, oidc.jwksUrl, timings) }));
  return async (token) => {
    const { jose, keys } = await verifier;
    let payload: JWTPayload;
    try {
      ({ payload } = await jose.jwtVerify(token, keys, {
        issuer: oidc.issuer,
        ...(oidc.audience === undefined ? {} : { audience: oidc.audience }),
        algorithms: ALGORITHMS,
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["exp"],
      }));
    } catch (error) {
      throw refusalOf(error, oidc);
    }
    // jose checked that `exp` is there and a number (requiredClaims).
    return { agentUri: agentUriOf(payload), scopes: scopesOf(payload), expiresAt: new Date(payload.exp! * 1000) };
  };
}

function agentUriOf(payload: JWTPayload): string {
  const claim = payload[AGENT_CLAIM];
  if (claim === undefined) throw refused(`The access token has no ${AGENT_CLAIM} claim`);
  if (typeof claim !== "string" || !isHttpUri(claim))
    throw refused(`The access token's ${AGENT_CLAIM} claim is not an absolute http(s) URI`);
  return claim;
}

function isHttpUri(text: string): boolean {
  if (!URL.canParse(text)) return false;
  const { protocol } = new URL(text);
  return protocol === "https:" || protocol === "http:";
}

/** The scopes named in `scope` (a space-separated string, RFC 9068) or `scp` (a list); others are ignored. */
function scopesOf(payload: JWTPayload): ReadonlySet<Scope> {
  const named = [payload.scope, payload.scp].flatMap((claim): unknown[] =>
    typeof claim === "string" ? claim.split(" ") : Array.isArray(claim) ? (claim as unknown[]) : [],
  );
  return new Set(
    named.filter((name): name is Scope => typeof name === "string" && isScope(name) && !API_KEY_ONLY_SCOPES.has(name)),
  );
}

const refused = (detail: string) => new AppError("UNAUTHENTICATED", detail);

/** jose's error classes by their stable `code` (util/errors.d.ts); `claim` for claim failures. */
type JoseFailure = { code?: unknown; claim?: unknown };

function refusalOf(error: unknown, oidc: OidcSettings): AppError {
  if (error instanceof IssuerKeysUnavailable) return keysUnavailable(error.retryAfterMs, error.cause);
  const { code, claim } = (error ?? {}) as JoseFailure;
  switch (code) {
    case "ERR_JWT_EXPIRED":
      return refused("The access token has expired");
    case "ERR_JWT_CLAIM_VALIDATION_FAILED":
      return claimRefusal(String(claim), oidc);
    case "ERR_JWS_SIGNATURE_VERIFICATION_FAILED":
      return refused("The access token's signature does not verify with the issuer's key");
    case "ERR_JWKS_NO_MATCHING_KEY":
    case "ERR_JWKS_MULTIPLE_MATCHING_KEYS":
      return refused("The access token is not signed with a key the issuer publishes (kid)");
    case "ERR_JOSE_ALG_NOT_ALLOWED":
    case "ERR_JOSE_NOT_SUPPORTED":
      return refused(`The access token's signature algorithm is not accepted (one of ${ALGORITHMS.join(", ")})`);
    case "ERR_JWS_INVALID":
    case "ERR_JWT_INVALID":
      return refused("The access token is not a well-formed signed JWT");
    default:
      // A key set jose cannot use (issuer-keys.ts catches the failed fetches): the issuer's side.
      return keysUnavailable(ISSUER_KEYS_FAILURE_COOLDOWN_MS, error);
  }
}

const keysUnavailable = (retryAfterMs: number, cause: unknown) =>
  new AppError("SERVICE_UNAVAILABLE", "The OIDC issuer's signing keys could not be fetched", {
    retryAfterSeconds: Math.ceil(retryAfterMs / 1000),
    cause,
  });

function claimRefusal(claim: string, oidc: OidcSettings): AppError {
  switch (claim) {
    case "iss":
      return refused(`The access token was not issued by ${oidc.issuer}`);
    case "aud":
      return refused(`The access token's audience (aud) does not include ${oidc.audience ?? ""}`);
    case "nbf":
      return refused("The access token is not valid yet (nbf)");
    case "exp":
      return refused("The access token has no expiry (exp)");
    default:
      return refused(`The access token's ${claim} claim is not valid`);
  }
}
