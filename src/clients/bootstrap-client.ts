import type { Logger } from "pino";
import type { Prisma } from "../db/database";
import { advisoryXactLock, LOCK_KEYS } from "../db/sql/advisory-xact-lock.sql";
import { apiKeyRow } from "./client-records";
import { parsePrefixes, parseScopes } from "./client.validate";
import { generateApiKey, generateSigningSecret, SCOPES } from "./credentials";
import type { SecretBox } from "./secret-box";

/** The BOOTSTRAP_* settings. */
export interface BootstrapSettings {
  apiKey?: string | undefined;
  signingSecret?: string | undefined;
  callbackPrefixes: readonly string[];
}

export type BootstrapOutcome =
  { created: false } | { created: true; clientId: string; generated: { apiKey?: string; signingSecret?: string } };

/**
 * First start with no client at all: creates one with every scope from the BOOTSTRAP_* settings,
 * generating what is not set. The generated values are returned (for `main.ts` to show once),
 * never logged.
 */
export async function ensureBootstrapClient(
  { prisma, log, secrets }: { prisma: Prisma; log: Logger; secrets: SecretBox },
  bootstrap: BootstrapSettings,
): Promise<BootstrapOutcome> {
  if ((await prisma.client.count()) > 0) return { created: false };
  const signingSecret = bootstrap.signingSecret ?? generateSigningSecret();
  const key = bootstrap.apiKey ?? generateApiKey();
  // Instances started at once on an empty database: the lock makes one of them create the client,
  // and the others find it.
  const client = await prisma.$transaction(async (tx) => {
    await advisoryXactLock.affectedRows(tx, { key: LOCK_KEYS.bootstrapClient });
    if ((await tx.client.count()) > 0) return null;
    const created = await tx.client.create({
      data: {
        name: "bootstrap",
        callbackPrefixes: parsePrefixes(bootstrap.callbackPrefixes),
        signingSecret: secrets.seal(signingSecret),
      },
    });
    await tx.apiKey.create({ data: apiKeyRow(created.id, key, parseScopes(SCOPES), "bootstrap") });
    return created;
  });
  if (client === null) return { created: false };
  log.info({ clientId: client.id }, "created the bootstrap client with every scope");
  return {
    created: true,
    clientId: client.id,
    generated: {
      ...(bootstrap.apiKey ? {} : { apiKey: key }),
      ...(bootstrap.signingSecret ? {} : { signingSecret }),
    },
  };
}
