import type { Logger } from "pino";
import type { Prisma } from "../db/database";
import type { SecretBox } from "./secret-box";

/**
 * At start: seals signing secrets stored in clear by earlier versions, and proves the key opens what
 * is stored — a wrong SECRETS_KEY must stop the start, not fail every delivery later.
 */
export async function prepareSecrets({
  prisma,
  log,
  secrets,
}: {
  prisma: Prisma;
  log: Logger;
  secrets: SecretBox;
}): Promise<{ sealed: number }> {
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
    // Only if unchanged since the read: a rotation in between wrote a sealed secret already.
    await prisma.client.updateMany({
      where: { id: row.id, signingSecret: row.signingSecret },
      data: { signingSecret: secrets.seal(row.signingSecret) },
    });
  }
  if (clear.length > 0) log.info({ clients: clear.length }, "sealed signing secrets that were stored in clear");
  return { sealed: clear.length };
}
