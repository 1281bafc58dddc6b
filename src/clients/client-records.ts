import type { Prisma } from "../db/database";
import { AppError } from "../errors";
import { hashApiKey, lookupPrefixOf, type Scope } from "./credentials";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;

/** Whether `id` can name a row: anything else is answered "not found" without a query. */
export function isRowId(id: string): boolean {
  return UUID.test(id);
}

/** The client's row; CLIENT_NOT_FOUND when there is none. */
export async function requireClient(prisma: Prisma, clientId: string) {
  const client = isRowId(clientId) ? await prisma.client.findUnique({ where: { id: clientId } }) : null;
  if (!client) throw new AppError("CLIENT_NOT_FOUND", `No client ${clientId}`);
  return client;
}

/** A new API key's row: the key itself is stored only as its hash. */
export function apiKeyRow(clientId: string, key: string, scopes: Scope[], label: string | null) {
  return { clientId, lookupPrefix: lookupPrefixOf(key), keyHash: hashApiKey(key), scopes, label };
}
