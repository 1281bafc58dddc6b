import type { JWTVerifyGetKey } from "jose" with { "resolution-mode": "import" };
import type { JoseModule } from "./jose-module";

export interface IssuerKeyTimings {
  /** How long a fetch of the key set may take before the token it was for is refused. */
  readonly fetchTimeoutMs?: number;
  /**
   * After a fetch, how long a token naming a key (`kid`) the set lacks is refused without fetching
   * again: bounds the fetches that tokens with made-up key ids can cause. A rotation is seen on the
   * first token signed with the new key after that.
   */
  readonly refetchCooldownMs?: number;
  /** How long fetched keys are used before they are fetched again even when every key matches. */
  readonly maxAgeMs?: number;
}

const ISSUER_KEYS_FETCH_TIMEOUT_MS = 5_000;
const ISSUER_KEYS_REFETCH_COOLDOWN_MS = 30_000;
const ISSUER_KEYS_MAX_AGE_MS = 600_000;

/**
 * The issuer's signing keys from its JWKS URL, kept in memory: fetched on the first token, again
 * when a token names a key the set does not hold (the issuer rotated its keys), and when they are
 * older than `maxAgeMs` (so a withdrawn key stops being accepted).
 */
export function issuerKeys(jose: JoseModule, jwksUrl: string, timings: IssuerKeyTimings = {}): JWTVerifyGetKey {
  return jose.createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: timings.fetchTimeoutMs ?? ISSUER_KEYS_FETCH_TIMEOUT_MS,
    cooldownDuration: timings.refetchCooldownMs ?? ISSUER_KEYS_REFETCH_COOLDOWN_MS,
    cacheMaxAge: timings.maxAgeMs ?? ISSUER_KEYS_MAX_AGE_MS,
  });
}
