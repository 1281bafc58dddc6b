import type { FetchImplementation, JWTVerifyGetKey } from "jose" with { "resolution-mode": "import" };
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
export const ISSUER_KEYS_MAX_AGE_MS = 600_000;
/**
 * After a failed fetch, how long a token that needs the key set is answered 503 without fetching
 * again: while the issuer is down, each instance asks it at most once per timeout + cooldown, and
 * requests do not each wait out a fetch timeout.
 */
export const ISSUER_KEYS_FAILURE_COOLDOWN_MS = 5_000;

/**
 * The issuer's key set could not be fetched, or a fetch failed less than the cooldown ago: the
 * token may well be valid, the caller should retry after `retryAfterMs`.
 */
export class IssuerKeysUnavailable extends Error {
  constructor(
    readonly retryAfterMs: number,
    options?: ErrorOptions,
  ) {
    super("The OIDC issuer's signing keys could not be fetched", options);
    this.name = "IssuerKeysUnavailable";
  }
}

/**
 * The issuer's signing keys from its JWKS URL, kept in memory: fetched on the first token, again
 * when a token names a key the set does not hold (the issuer rotated its keys), and when they are
 * older than `maxAgeMs` (so a withdrawn key stops being accepted). Concurrent tokens share the one
 * fetch under way (jose); a failed fetch is not repeated for ISSUER_KEYS_FAILURE_COOLDOWN_MS, while
 * keys already held keep verifying the tokens they match.
 */
export function issuerKeys(jose: JoseModule, jwksUrl: string, timings: IssuerKeyTimings = {}): JWTVerifyGetKey {
  return jose.createRemoteJWKSet(new URL(jwksUrl), {
    timeoutDuration: timings.fetchTimeoutMs ?? ISSUER_KEYS_FETCH_TIMEOUT_MS,
    cooldownDuration: timings.refetchCooldownMs ?? ISSUER_KEYS_REFETCH_COOLDOWN_MS,
    cacheMaxAge: timings.maxAgeMs ?? ISSUER_KEYS_MAX_AGE_MS,
    [jose.customFetch]: fetchUnlessCoolingDown(),
  });
}

/**
 * jose's fetch of the key set, refused at once within the cooldown after a failure. A failure is
 * anything that leaves no key set: no answer within the timeout, an answer other than 200, a body
 * that is not a JSON key set.
 */
function fetchUnlessCoolingDown(): FetchImplementation {
  let failedAt = Number.NEGATIVE_INFINITY;
  return async (url, init) => {
    const waitMs = failedAt + ISSUER_KEYS_FAILURE_COOLDOWN_MS - Date.now();
    if (waitMs > 0) throw new IssuerKeysUnavailable(waitMs);
    try {
      const response = await fetch(url, init);
      if (response.status !== 200) throw new Error(`The key set was answered HTTP ${response.status}`);
      const keySet: unknown = await response.json();
      if (!isKeySet(keySet)) throw new Error("The key set is not a JSON object with a keys array");
      return Response.json(keySet);
    } catch (cause) {
      failedAt = Date.now();
      throw new IssuerKeysUnavailable(ISSUER_KEYS_FAILURE_COOLDOWN_MS, { cause });
    }
  };
}

function isKeySet(value: unknown): boolean {
  return typeof value === "object" && value !== null && Array.isArray((value as { keys?: unknown }).keys);
}
