import { causesOf } from "../domain/error-chain";

/**
 * What an undici request's failure was, in a few words for a log or a delivery's last_error: "no
 * answer within N s" for its timeouts, else the first error code in its cause chain, else its message.
 */
export function describeRequestFailure(error: unknown, timeoutMs: number): string {
  for (const e of causesOf(error, 5)) {
    if (e.name === "TimeoutError") return `no answer within ${timeoutMs / 1000} s`;
    const code = e.code as string | undefined;
    if (code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT")
      return `no answer within ${timeoutMs / 1000} s`;
    if (code && code !== "UND_ERR_ABORTED") return code;
  }
  return typeof (error as Error)?.message === "string" ? (error as Error).message : "request failed";
}
