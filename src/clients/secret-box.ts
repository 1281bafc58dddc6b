import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Webhook signing secrets must be readable by the service (it signs with them), so they cannot be
 * hashed like API keys: they are sealed with AES-256-GCM under a key that is not in the database.
 * A copy of the database alone (a backup, a replica, a dump in a ticket) does not reveal them.
 * Stored form: "v1:" + base64url(12-byte IV) + ":" + base64url(ciphertext + 16-byte tag).
 */
export interface SecretBox {
  seal(plain: string): string;
  /** The secret; throws when the value was sealed under another key or altered. */
  open(stored: string): string;
  isSealed(stored: string): boolean;
}

const PREFIX = "v1:";

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error("The secrets key must be 32 bytes");
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const sealed = Buffer.concat([cipher.update(plain, "utf8"), cipher.final(), cipher.getAuthTag()]);
      return `${PREFIX}${iv.toString("base64url")}:${sealed.toString("base64url")}`;
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) throw new Error("The value is not sealed");
      const [ivText, sealedText] = stored.slice(PREFIX.length).split(":") as [string, string | undefined];
      const iv = Buffer.from(ivText, "base64url");
      const sealed = Buffer.from(sealedText ?? "", "base64url");
      const decipher = createDecipheriv("aes-256-gcm", key, iv);
      decipher.setAuthTag(sealed.subarray(sealed.length - 16));
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString(
        "utf8",
      );
    },
    isSealed: (stored) => stored.startsWith(PREFIX),
  };
}

export type SecretsKeySource = "SECRETS_KEY" | "key file" | "generated key file" | "in memory";

/**
 * The key: SECRETS_KEY when set (what several machines must share); otherwise a key file next to the
 * data (DATA_DIR/secrets.key, created once with mode 0600), which serves every process started from
 * the same folder; with DATA_DIR=memory:// a key that lives as long as the in-memory database.
 */
export function loadSecretsKey(config: { secretsKey: Buffer | undefined; dataDir: string }): {
  key: Buffer;
  source: SecretsKeySource;
  file?: string;
} {
  if (config.secretsKey) return { key: config.secretsKey, source: "SECRETS_KEY" };
  if (config.dataDir === "memory://") return { key: randomBytes(32), source: "in memory" };
  const file = path.join(config.dataDir, "secrets.key");
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, "utf8").trim(), "base64");
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte base64 key`);
    return { key, source: "key file", file };
  }
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  // "wx": never overwrite a key another process wrote a moment ago.
  try {
    writeFileSync(file, `${key.toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    chmodSync(file, 0o600);
    return { key, source: "generated key file", file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return loadSecretsKey(config);
  }
}
