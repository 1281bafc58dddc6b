import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const SCOPES = ["subscriptions", "events:read", "events:write", "objects:write", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

/** The part of a key stored in clear to find its row; the rest is only ever compared by hash. */
const LOOKUP_PREFIX_LENGTH = 16;

/** "cgw_" + 32 random bytes, base64url: 256 bits, so a fast hash (SHA-256) is enough to store it. */
export function generateApiKey(): string {
  return `cgw_${randomBytes(32).toString("base64url")}`;
}

export function lookupPrefixOf(key: string): string {
  return key.slice(0, LOOKUP_PREFIX_LENGTH);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, "hex");
  const right = Buffer.from(b, "hex");
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Standard Webhooks secret: "whsec_" + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
