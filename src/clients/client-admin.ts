import type { Prisma } from "../db/database";
import { AppError, validationError } from "../errors";
import { apiKeyRow, isRowId, requireClient } from "./client-records";
import { parsePrefixes, parseScopes } from "./client.validate";
import { generateApiKey, generateSigningSecret } from "./credentials";
import type { SecretBox } from "./secret-box";

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
 * The operators' work on clients and their keys. `keysChanged` is called after every change that
 * authentication must see at once (a revocation, new callback prefixes).
 */
export function createClientAdmin({
  prisma,
  secrets,
  keysChanged,
}: {
  prisma: Prisma;
  secrets: SecretBox;
  keysChanged: () => void;
}) {
  return {
    /** The signing secret is returned this once; it is stored sealed. */
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

    /** The key is returned this once; only its hash is stored. */
    async issueKey(
      clientId: string,
      scopes: readonly string[],
      label: string | null = null,
      key = generateApiKey(),
    ): Promise<{ keyId: string; key: string }> {
      await requireClient(prisma, clientId);
      const row = await prisma.apiKey.create({ data: apiKeyRow(clientId, key, parseScopes(scopes), label) });
      return { keyId: row.id, key };
    },

    async revokeKey(keyId: string): Promise<void> {
      const updated = isRowId(keyId)
        ? await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } })
        : { count: 0 };
      if (updated.count === 0) throw new AppError("NOT_FOUND", `No active key ${keyId}`);
      keysChanged();
    },

    async setCallbackPrefixes(clientId: string, prefixes: readonly string[]): Promise<string[]> {
      await requireClient(prisma, clientId);
      const callbackPrefixes = parsePrefixes(prefixes);
      await prisma.client.update({ where: { id: clientId }, data: { callbackPrefixes } });
      keysChanged();
      return callbackPrefixes;
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

export type ClientAdmin = ReturnType<typeof createClientAdmin>;
