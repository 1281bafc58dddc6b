import type { Prisma } from "../db/database";
import { validationError } from "../errors";
import { requireClient } from "./client-records";
import { generateSigningSecret } from "./credentials";
import { ExpiringCache } from "./expiring-cache";
import type { SecretBox } from "./secret-box";
import { DEFAULT_GRACE_SECONDS, graceSecondsProblem, type SigningSecrets, secretsValidAt } from "./signing-secrets";

/**
 * Opened signing secrets are remembered this long per client, so a delivery does not cost a database
 * read: a rotation reaches deliveries at once on the instance that made it, within this elsewhere.
 */
export const SIGNING_SECRETS_CACHE_MS = 30_000;
const SIGNING_SECRETS_CACHE_SIZE = 10_000;

/** A client's signing secrets: read and opened (remembered), and rotated. */
export function createSigningSecretStore({ prisma, secrets }: { prisma: Prisma; secrets: SecretBox }) {
  const opened = new ExpiringCache<string, SigningSecrets>(SIGNING_SECRETS_CACHE_MS, SIGNING_SECRETS_CACHE_SIZE);

  async function signingSecretsOf(clientId: string): Promise<SigningSecrets> {
    const cached = opened.get(clientId);
    if (cached) return cached;
    const mark = opened.mark();
    const row = await requireClient(prisma, clientId);
    const keys: SigningSecrets = {
      current: secrets.open(row.signingSecret),
      previous:
        row.previousSigningSecret !== null &&
        row.previousSecretExpiresAt !== null &&
        row.previousSecretExpiresAt.getTime() > Date.now()
          ? { secret: secrets.open(row.previousSigningSecret), expiresAt: row.previousSecretExpiresAt }
          : null,
    };
    opened.remember(clientId, keys, mark); // not when a rotation came after the read started
    return keys;
  }

  return {
    /** The current secret, read now (not remembered). */
    async signingSecretOf(clientId: string): Promise<string> {
      return secrets.open((await requireClient(prisma, clientId)).signingSecret);
    },

    /**
     * What a delivery sent at `now` is signed with, newest first: the current secret, and the
     * previous one until its grace period ends (checked against `now`, also when remembered).
     */
    async signingSecretsAt(clientId: string, now: Date): Promise<string[]> {
      return secretsValidAt(await signingSecretsOf(clientId), now);
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
        const { signingSecret: replaced } = await requireClient(prisma, clientId);
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
        opened.forget(clientId);
        return { signingSecret, previousSecretExpiresAt };
      }
    },
  };
}

export type SigningSecretStore = ReturnType<typeof createSigningSecretStore>;
