import type { Logger } from "pino";
import type { Prisma } from "../db/database";
import { readCallbackPrefix } from "../domain/callback-prefix";
import { AppError, validationError } from "../errors";
import {
  generateApiKey,
  generateSigningSecret,
  hashApiKey,
  isScope,
  lookupPrefixOf,
  sameHash,
  SCOPES,
  type Scope,
} from "./credentials";
import type { Principal } from "./principal";
import type { SecretBox } from "./secret-box";
import { DEFAULT_GRACE_SECONDS, graceSecondsProblem, type SigningSecrets, secretsValidAt } from "./signing-secrets";

export interface ClientSummary {
  id: string;
  name: string;
  callbackPrefixes: string[];
  maxSubscriptions: number;
  createdAt: Date;
  /** When the secret replaced by the last rotation stops signing; null when none still does. */
  previousSecretExpiresAt: Date | null;
  keys: Array<{
    id: string;
    lookupPrefix: string;
    scopes: string[];
    label: string | null;
    createdAt: Date;
    revokedAt: Date | null;
  }>;
}

/**
 * Authenticated keys are remembered this long, so a request does not cost a database read; it is
 * also the longest a revoked key keeps working on an instance that did not revoke it.
 */
export const PRINCIPAL_CACHE_MS = 5_000;
/** At most this many keys are remembered; past it the cache starts again empty. */
const PRINCIPAL_CACHE_SIZE = 10_000;
/** Advisory lock held while the first client is created (other keys: station import, instance registry). */
const BOOTSTRAP_LOCK_KEY = 7_310_002;
/**
 * Opened signing secrets are remembered this long per client, so a delivery does not cost a database
 * read: a rotation reaches deliveries at once on the instance that made it, within this elsewhere.
 */
export const SIGNING_SECRETS_CACHE_MS = 30_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

export function parseScopes(values: readonly string[]): Scope[] {
  const unknown = values.filter((s) => !isScope(s));
  if (unknown.length > 0)
    throw validationError([
      { field: "scopes", message: `unknown scope(s) ${unknown.join(", ")}; known: ${SCOPES.join(", ")}` },
    ]);
  if (values.length === 0) throw validationError([{ field: "scopes", message: "must name at least one scope" }]);
  return [...new Set(values)] as Scope[];
}

/** Registered callback prefixes: "*" or http(s) URLs (domain/callback-prefix.ts), each checked. */
export function parsePrefixes(values: readonly string[]): string[] {
  const problems = values.flatMap((p, i) => {
    const read = readCallbackPrefix(p);
    if (!("problem" in read)) return [];
    const shown = p.length > 200 ? `${JSON.stringify(p.slice(0, 200))}…` : JSON.stringify(p);
    return [{ field: `callbackPrefixes[${i}]`, message: `${read.problem}, got ${shown}` }];
  });
  if (problems.length > 0) throw validationError(problems);
  if (values.length === 0)
    throw validationError([{ field: "callbackPrefixes", message: 'must name at least one prefix ("*" for any URL)' }]);
  return [...new Set(values)];
}

export function createClientService({ prisma, log, secrets }: { prisma: Prisma; log: Logger; secrets: SecretBox }) {
  const cache = new Map<string, { principal: Principal; until: number }>();
  // The lookup under way per key hash: concurrent requests with a key that is not remembered (a
  // burst right after start or expiry) wait for one database read instead of making one each.
  const lookups = new Map<string, Promise<Principal | null>>();
  // Bumped after every change that must reach the cache at once (a revocation, new prefixes): a
  // lookup that started before it may have read the old row, so its answer is not remembered, and
  // an authentication after the change does not join it.
  let generation = 0;
  const forgetAll = () => {
    generation++;
    cache.clear();
    lookups.clear();
  };
  // The same for signing secrets: a read that started before a rotation is not remembered.
  const signing = new Map<string, { keys: SigningSecrets; until: number }>();
  let signingGeneration = 0;

  async function signingSecretsOf(clientId: string): Promise<SigningSecrets> {
    const cached = signing.get(clientId);
    if (cached && cached.until > Date.now()) return cached.keys;
    const startedAt = signingGeneration;
    const row = await requireClient(clientId);
    const keys: SigningSecrets = {
      current: secrets.open(row.signingSecret),
      previous:
        row.previousSigningSecret !== null &&
        row.previousSecretExpiresAt !== null &&
        row.previousSecretExpiresAt.getTime() > Date.now()
          ? { secret: secrets.open(row.previousSigningSecret), expiresAt: row.previousSecretExpiresAt }
          : null,
    };
    if (startedAt === signingGeneration) {
      if (signing.size >= PRINCIPAL_CACHE_SIZE) signing.clear();
      signing.set(clientId, { keys, until: Date.now() + SIGNING_SECRETS_CACHE_MS });
    }
    return keys;
  }

  async function lookUp(key: string, hash: string): Promise<Principal | null> {
    const startedAt = generation;
    const row = await prisma.apiKey.findUnique({
      where: { lookupPrefix: lookupPrefixOf(key) },
      include: { client: true },
    });
    if (!row || row.revokedAt !== null || !sameHash(row.keyHash, hash)) {
      cache.delete(hash);
      return null;
    }
    const principal: Principal = {
      clientId: row.clientId,
      keyId: row.id,
      scopes: new Set(row.scopes.filter(isScope)),
      callbackPrefixes: row.client.callbackPrefixes,
      maxSubscriptions: row.client.maxSubscriptions,
    };
    if (startedAt !== generation) return principal; // read before a change: answer, but do not remember
    if (cache.size >= PRINCIPAL_CACHE_SIZE) cache.clear();
    cache.set(hash, { principal, until: Date.now() + PRINCIPAL_CACHE_MS });
    return principal;
  }

  async function requireClient(clientId: string) {
    const client = UUID.test(clientId) ? await prisma.client.findUnique({ where: { id: clientId } }) : null;
    if (!client) throw new AppError("CLIENT_NOT_FOUND", `No client ${clientId}`);
    return client;
  }

  async function issueKey(
    clientId: string,
    scopes: readonly string[],
    label: string | null = null,
    key = generateApiKey(),
  ): Promise<{ keyId: string; key: string }> {
    await requireClient(clientId);
    const row = await prisma.apiKey.create({
      data: {
        clientId,
        lookupPrefix: lookupPrefixOf(key),
        keyHash: hashApiKey(key),
        scopes: parseScopes(scopes),
        label,
      },
    });
    return { keyId: row.id, key };
  }

  return {
    /**
     * The principal for `Authorization: Bearer <key>`, or null when the key is unknown or revoked.
     * `beforeLookup` runs only when the key is not remembered and no lookup of it is under way,
     * before one starts (joining one reads nothing, so it costs nothing): what it throws (or rejects
     * with) is thrown instead, and the database is not read.
     */
    async authenticate(key: string, beforeLookup?: () => void | Promise<void>): Promise<Principal | null> {
      const hash = hashApiKey(key);
      const cached = cache.get(hash);
      if (cached && cached.until > Date.now()) return cached.principal;
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
    },

    /** A key's standing now, read from the database (no cache): null when no such key exists. */
    async keyStatus(keyId: string): Promise<{ revoked: boolean; scopes: Set<Scope> } | null> {
      const row = await prisma.apiKey.findUnique({ where: { id: keyId }, select: { revokedAt: true, scopes: true } });
      return row ? { revoked: row.revokedAt !== null, scopes: new Set(row.scopes.filter(isScope)) } : null;
    },

    /**
     * First start with no client at all: creates one with every scope from the BOOTSTRAP_* settings,
     * generating what is not set. The generated values are returned (for `main.ts` to show once),
     * never logged.
     */
    async ensureBootstrapClient(bootstrap: {
      apiKey?: string | undefined;
      signingSecret?: string | undefined;
      callbackPrefixes: readonly string[];
    }): Promise<
      { created: false } | { created: true; clientId: string; generated: { apiKey?: string; signingSecret?: string } }
    > {
      if ((await prisma.client.count()) > 0) return { created: false };
      const signingSecret = bootstrap.signingSecret ?? generateSigningSecret();
      const key = bootstrap.apiKey ?? generateApiKey();
      // Instances started at once on an empty database: the lock makes one of them create the client,
      // and the others find it.
      const client = await prisma.$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`);
        if ((await tx.client.count()) > 0) return null;
        const created = await tx.client.create({
          data: {
            name: "bootstrap",
            callbackPrefixes: parsePrefixes(bootstrap.callbackPrefixes),
            signingSecret: secrets.seal(signingSecret),
          },
        });
        await tx.apiKey.create({
          data: {
            clientId: created.id,
            lookupPrefix: lookupPrefixOf(key),
            keyHash: hashApiKey(key),
            scopes: parseScopes(SCOPES),
            label: "bootstrap",
          },
        });
        return created;
      });
      if (client === null) return { created: false };
      log.warn({ clientId: client.id }, "created the bootstrap client with every scope");
      return {
        created: true,
        clientId: client.id,
        generated: {
          ...(bootstrap.apiKey ? {} : { apiKey: key }),
          ...(bootstrap.signingSecret ? {} : { signingSecret }),
        },
      };
    },

    async createClient(input: {
      name: string;
      callbackPrefixes: readonly string[];
      maxSubscriptions?: number;
    }): Promise<{ clientId: string; signingSecret: string }> {
      if (!input.name.trim()) throw validationError([{ field: "name", message: "must not be empty" }]);
      const signingSecret = generateSigningSecret();
      const client = await prisma.client.create({
        data: {
          name: input.name.trim(),
          callbackPrefixes: parsePrefixes(input.callbackPrefixes),
          signingSecret: secrets.seal(signingSecret),
          ...(input.maxSubscriptions ? { maxSubscriptions: input.maxSubscriptions } : {}),
        },
      });
      return { clientId: client.id, signingSecret };
    },

    issueKey,

    async revokeKey(keyId: string): Promise<void> {
      const updated = UUID.test(keyId)
        ? await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } })
        : { count: 0 };
      if (updated.count === 0) throw new AppError("NOT_FOUND", `No active key ${keyId}`);
      forgetAll();
    },

    /**
     * A new signing secret. The one it replaces keeps signing (next to the new one) for `graceSeconds`,
     * so receivers can switch without rejecting deliveries; 0 ends it at once (a leaked secret). Only
     * one previous secret is kept: a rotation during a grace period makes the then-current secret the
     * previous one and ends the older one at once.
     */
    async rotateSigningSecret(
      clientId: string,
      graceSeconds: number = DEFAULT_GRACE_SECONDS,
    ): Promise<{ signingSecret: string; previousSecretExpiresAt: Date }> {
      const problem = graceSecondsProblem(graceSeconds);
      if (problem) throw validationError([problem]);
      const signingSecret = generateSigningSecret();
      // Written only if the current secret is still the one read, so of two concurrent rotations
      // the second keeps the first's secret as previous (it reads again) rather than losing it.
      for (;;) {
        const { signingSecret: replaced } = await requireClient(clientId);
        const previousSecretExpiresAt = new Date(Date.now() + graceSeconds * 1000);
        const kept = graceSeconds > 0;
        const updated = await prisma.client.updateMany({
          where: { id: clientId, signingSecret: replaced },
          data: {
            signingSecret: secrets.seal(signingSecret),
            previousSigningSecret: kept ? (secrets.isSealed(replaced) ? replaced : secrets.seal(replaced)) : null,
            previousSecretExpiresAt: kept ? previousSecretExpiresAt : null,
          },
        });
        if (updated.count === 0) continue;
        signingGeneration++;
        signing.delete(clientId);
        return { signingSecret, previousSecretExpiresAt };
      }
    },

    async setCallbackPrefixes(clientId: string, prefixes: readonly string[]): Promise<string[]> {
      await requireClient(clientId);
      const callbackPrefixes = parsePrefixes(prefixes);
      await prisma.client.update({ where: { id: clientId }, data: { callbackPrefixes } });
      forgetAll();
      return callbackPrefixes;
    },

    async signingSecretOf(clientId: string): Promise<string> {
      return secrets.open((await requireClient(clientId)).signingSecret);
    },

    /**
     * What a delivery sent at `now` is signed with, newest first: the current secret, and the
     * previous one until its grace period ends (checked against `now`, also when remembered).
     */
    async signingSecretsAt(clientId: string, now: Date): Promise<string[]> {
      return secretsValidAt(await signingSecretsOf(clientId), now);
    },

    /**
     * At start: seals secrets stored in clear by earlier versions, and proves the key opens what is
     * stored — a wrong SECRETS_KEY must stop the start, not fail every delivery later.
     */
    async prepareSecrets(): Promise<{ sealed: number }> {
      const rows = await prisma.client.findMany({ select: { id: true, signingSecret: true } });
      const sample = rows.find((r) => secrets.isSealed(r.signingSecret));
      if (sample) {
        try {
          secrets.open(sample.signingSecret);
        } catch {
          throw new Error(
            "The stored signing secrets were sealed with another key: set SECRETS_KEY (or DATA_DIR/secrets.key) to the key they were sealed with",
          );
        }
      }
      const clear = rows.filter((r) => !secrets.isSealed(r.signingSecret));
      for (const row of clear) {
        await prisma.client.updateMany({
          where: { id: row.id, signingSecret: row.signingSecret },
          data: { signingSecret: secrets.seal(row.signingSecret) },
        });
      }
      if (clear.length > 0) log.info({ clients: clear.length }, "sealed signing secrets that were stored in clear");
      return { sealed: clear.length };
    },

    async listClients(): Promise<ClientSummary[]> {
      const clients = await prisma.client.findMany({
        orderBy: { createdAt: "asc" },
        include: { apiKeys: { orderBy: { createdAt: "asc" } } },
      });
      return clients.map((c) => ({
        id: c.id,
        name: c.name,
        callbackPrefixes: c.callbackPrefixes,
        maxSubscriptions: c.maxSubscriptions,
        createdAt: c.createdAt,
        previousSecretExpiresAt:
          c.previousSecretExpiresAt && c.previousSecretExpiresAt.getTime() > Date.now()
            ? c.previousSecretExpiresAt
            : null,
        keys: c.apiKeys.map((k) => ({
          id: k.id,
          lookupPrefix: k.lookupPrefix,
          scopes: k.scopes,
          label: k.label,
          createdAt: k.createdAt,
          revokedAt: k.revokedAt,
        })),
      }));
    },
  };
}

export type ClientService = ReturnType<typeof createClientService>;
