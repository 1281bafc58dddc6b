import type { Prisma } from "../db/database";
import { hashApiKey, isScope, lookupPrefixOf, sameHash, type Scope } from "./credentials";
import { ExpiringCache } from "./expiring-cache";
import type { Principal } from "./principal";

/**
 * Authenticated keys are remembered this long, so a request does not cost a database read; it is
 * also the longest a revoked key keeps working on an instance that did not revoke it.
 */
export const PRINCIPAL_CACHE_MS = 5_000;
const PRINCIPAL_CACHE_SIZE = 10_000;

/** API keys to principals: remembered per key hash, and one database read shared by concurrent callers. */
export function createKeyAuthentication(prisma: Prisma) {
  const remembered = new ExpiringCache<string, Principal>(PRINCIPAL_CACHE_MS, PRINCIPAL_CACHE_SIZE);
  // The read under way per key hash, for callers with a key that is not remembered (a burst right
  // after start or expiry) to join. Emptied with the cache, so no caller after a change joins a
  // read from before it.
  const lookups = new Map<string, Promise<Principal | null>>();

  async function lookUp(key: string, hash: string): Promise<Principal | null> {
    const mark = remembered.mark();
    const row = await prisma.apiKey.findUnique({
      where: { lookupPrefix: lookupPrefixOf(key) },
      include: { client: true },
    });
    if (!row || row.revokedAt !== null || !sameHash(row.keyHash, hash)) {
      remembered.delete(hash);
      return null;
    }
    const principal: Principal = {
      clientId: row.clientId,
      keyId: row.id,
      scopes: new Set(row.scopes.filter(isScope)),
      callbackPrefixes: row.client.callbackPrefixes,
      maxSubscriptions: row.client.maxSubscriptions,
    };
    // A read from before a change still answers its callers, but is not remembered.
    remembered.remember(hash, principal, mark);
    return principal;
  }

  /**
   * The principal for `Authorization: Bearer <key>`, or null when the key is unknown or revoked.
   * `beforeLookup` runs only when the key is not remembered and no read of it is under way,
   * before one starts (joining a read costs nothing): what it throws is thrown instead, and the
   * database is not read.
   */
  async function authenticate(key: string, beforeLookup?: () => void | Promise<void>): Promise<Principal | null> {
    const hash = hashApiKey(key);
    const cached = remembered.get(hash);
    if (cached) return cached;
    const joined = lookups.get(hash);
    if (joined) return joined;
    await beforeLookup?.();
    const pending = lookups.get(hash); // one may have started while beforeLookup waited (Redis)
    if (pending) return pending;
    const lookup = lookUp(key, hash).finally(() => {
      if (lookups.get(hash) === lookup) lookups.delete(hash);
    });
    lookups.set(hash, lookup);
    return lookup;
  }

  /** A key's standing now, read from the database (no cache): null when no such key exists. */
  async function keyStatus(keyId: string): Promise<{ revoked: boolean; scopes: Set<Scope> } | null> {
    const row = await prisma.apiKey.findUnique({ where: { id: keyId }, select: { revokedAt: true, scopes: true } });
    return row ? { revoked: row.revokedAt !== null, scopes: new Set(row.scopes.filter(isScope)) } : null;
  }

  /** After a change authentication must see at once on this instance (a revocation, new prefixes). */
  function forgetAll(): void {
    remembered.forget();
    lookups.clear();
  }

  return { authenticate, keyStatus, forgetAll };
}

export type KeyAuthentication = ReturnType<typeof createKeyAuthentication>;
