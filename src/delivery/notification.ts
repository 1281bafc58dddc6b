import { createHmac, createSecretKey, type KeyObject } from "node:crypto";

/** CONTRACT §7: the callback body, exactly these five fields in this order. */
export function notificationBody(n: {
  subscriptionId: string;
  awb: string;
  state: string;
  toaTimestamp: Date | null;
  receivedAt: Date;
}): string {
  return JSON.stringify({
    subscriptionId: n.subscriptionId,
    AWB: n.awb,
    State: n.state,
    toaTimestamp: n.state === "TOA" && n.toaTimestamp ? n.toaTimestamp.toISOString() : null,
    timestamp: n.receivedAt.toISOString(),
  });
}

/**
 * Standard Webhooks signature: "v1," + base64 HMAC-SHA256 of "id.timestamp.body", keyed with the
 * base64-decoded part of the "whsec_" secret. `timestamp` is Unix seconds.
 */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}

/** Secrets' keys, made once: a signature with a key made for it took 27-34 µs, with a kept key 4 µs. */
const signingKeys = new Map<string, { readonly key: KeyObject; usedAt: number }>();
/** Secrets signed with at once are far fewer; past this the least recently used key is forgotten. */
export const MAX_SIGNING_KEYS = 1_000;
/** A key unused this long is forgotten at the next signature: a secret rotated out does not stay in memory. */
export const SIGNING_KEY_IDLE_MS = 10 * 60_000;

function signingKey(secret: string): KeyObject {
  const now = Date.now();
  const kept = signingKeys.get(secret) ?? {
    key: createSecretKey(Buffer.from(secret.startsWith("whsec_") ? secret.slice(6) : secret, "base64")),
    usedAt: now,
  };
  kept.usedAt = now;
  // Set again at the end: the map stays in the order of last use, so the oldest come first below.
  signingKeys.delete(secret);
  signingKeys.set(secret, kept);
  for (const [oldest, { usedAt }] of signingKeys) {
    if (signingKeys.size <= MAX_SIGNING_KEYS && usedAt > now - SIGNING_KEY_IDLE_MS) break;
    signingKeys.delete(oldest);
  }
  return kept.key;
}

/** How many secrets' keys are kept (for tests). */
export function signingKeysKept(): number {
  return signingKeys.size;
}

/**
 * The `webhook-signature` header for every secret that is valid now, newest first, separated by
 * spaces as Standard Webhooks allows: during a rotation's grace period a receiver that knows either
 * secret finds a signature it can check.
 */
export function webhookSignatures(secrets: readonly string[], id: string, timestamp: number, body: string): string {
  return secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(" ");
}

/** scheme://host:port: deliveries to one origin share its concurrency limit and connections. */
export function originOf(callback: string): string {
  const url = new URL(callback);
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return `${url.protocol}//${url.hostname}:${port}`;
}
