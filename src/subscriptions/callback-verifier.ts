import { type Dispatcher, request } from "undici";
import { causesOf } from "../domain/error-chain";
import { AppError } from "../errors";
import { assertHostAllowed, forbiddenCause } from "../outbound/guarded-agent";
import { isRegistered, parseCallbackUrl } from "./callback-url";

/** CONTRACT §2: the OPTIONS check gives up after 5 s. */
export const CALLBACK_CHECK_TIMEOUT_MS = 5_000;
const USER_AGENT = "cargo-gateway/1.0 (callback verification)";

const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_SOCKET",
  "ETIMEDOUT",
  "UND_ERR_ABORTED",
]);

/**
 * Checks that the service can deliver to `callback` (CONTRACT §2, §5): registered prefix (403),
 * allowed address (422), and an OPTIONS answer that is 2xx with POST in `Allow` (422), reached within
 * 5 s without following redirects (424 when it cannot be reached). Returns the normalised URL.
 */
export async function verifyCallback(
  callback: string,
  {
    prefixes,
    allowPrivate,
    dispatcher,
  }: { prefixes: readonly string[]; allowPrivate: boolean; dispatcher: Dispatcher },
): Promise<string> {
  const url = parseCallbackUrl(callback);
  if (!isRegistered(url, prefixes)) {
    throw new AppError(
      "CALLBACK_NOT_REGISTERED",
      `The callback ${url.href} is outside this client's registered callback prefixes`,
    );
  }
  let response: Dispatcher.ResponseData;
  try {
    assertHostAllowed(url, allowPrivate);
    response = await request(url, {
      method: "OPTIONS",
      dispatcher,
      headers: { "user-agent": USER_AGENT },
      headersTimeout: CALLBACK_CHECK_TIMEOUT_MS,
      bodyTimeout: CALLBACK_CHECK_TIMEOUT_MS,
      signal: AbortSignal.timeout(CALLBACK_CHECK_TIMEOUT_MS),
    });
  } catch (error) {
    const forbidden = forbiddenCause(error);
    if (forbidden)
      throw new AppError("CALLBACK_INVALID", `The callback's address is not allowed: ${forbidden.message}`);
    const code = networkCode(error);
    if (code === "TIMEOUT")
      throw new AppError(
        "CALLBACK_UNREACHABLE",
        `OPTIONS ${url.href} got no answer within ${CALLBACK_CHECK_TIMEOUT_MS / 1000} s`,
      );
    throw new AppError("CALLBACK_UNREACHABLE", `OPTIONS ${url.href} failed: ${code ?? (error as Error).message}`, {
      extensions: { networkError: code ?? null },
    });
  }
  response.body.dump().catch(() => {});
  const allow = headerValue(response.headers.allow);
  const status = response.statusCode;
  if (status < 200 || status > 299) {
    const location = headerValue(response.headers.location);
    throw new AppError(
      "CALLBACK_INVALID",
      `OPTIONS ${url.href} answered ${status}${location ? ` (redirect to ${location}, not followed)` : ""}; a 2xx answer allowing POST is required`,
      { extensions: { optionsStatus: status, allow: allow ?? null } },
    );
  }
  const methods = (allow ?? "").split(",").map((m) => m.trim().toUpperCase());
  if (!methods.includes("POST")) {
    throw new AppError(
      "CALLBACK_INVALID",
      `OPTIONS ${url.href} answered ${status} with Allow: ${allow === undefined ? "(absent)" : `"${allow}"`}; POST must be allowed`,
      {
        extensions: { optionsStatus: status, allow: allow ?? null },
      },
    );
  }
  return url.href;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function networkCode(error: unknown): string | undefined {
  for (const e of causesOf(error, 5)) {
    if (e.name === "TimeoutError" || e.code === "UND_ERR_HEADERS_TIMEOUT" || e.code === "UND_ERR_CONNECT_TIMEOUT")
      return "TIMEOUT";
    if (typeof e.code === "string" && UNREACHABLE_CODES.has(e.code)) return e.code;
  }
  return undefined;
}
