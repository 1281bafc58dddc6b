import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Webhook, WebhookVerificationError } from "standardwebhooks";

/** Verifies a Standard Webhooks signature as a receiver would (independent of the sender's code). */
export function verifySignature(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = String(headers["webhook-id"]);
  const timestamp = String(headers["webhook-timestamp"]);
  const expected = createHmac("sha256", Buffer.from(secret.replace(/^whsec_/, ""), "base64"))
    .update(`${id}.${timestamp}.${body}`)
    .digest();
  return String(headers["webhook-signature"])
    .split(" ")
    .some((part) => {
      const [version, signature] = part.split(",");
      const given = Buffer.from(signature ?? "", "base64");
      return version === "v1" && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * Whether a receiver holding `secret` accepts the post with the Standard Webhooks library receivers
 * use (`standardwebhooks`' Webhook.verify: any one matching signature, timestamp within 5 minutes).
 */
export function standardVerifies(secret: string, post: { headers: IncomingHttpHeaders; body: string }): boolean {
  try {
    new Webhook(secret).verify(post.body, post.headers as Record<string, string>);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    throw error;
  }
}

/** Resolves once `predicate` holds, checking whenever `subscribe` reports a change or every 50 ms. */
export async function until(
  predicate: () => boolean | Promise<boolean>,
  { timeoutMs = 20_000, what = "condition" } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * `promise`, or a failure naming `what` once `timeoutMs` has passed without it settling: a step that
 * hangs then says which it was, instead of the whole test running into Jest's timeout.
 */
export async function within<T>(what: string, timeoutMs: number, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
