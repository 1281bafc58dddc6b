import { REQUEST_TIMEOUT_MS } from "./http";
import { assertConforms } from "./onerecord-conformance";

/** An answer of the ONE Record API: its status, headers and body (parsed when JSON). */
export interface OneRecordAnswer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface OneRecordRequest {
  method?: string;
  /** Sent as JSON with Content-Type application/ld+json, unless `contentType` says otherwise. */
  body?: unknown;
  /** An API key or access token; none when null. */
  token?: string | null;
  accept?: string | null;
  contentType?: string | null;
  headers?: Record<string, string>;
}

/**
 * A request to `url` (absolute: a URI the server answered, or base + path) as a ONE Record client sends
 * it. Every JSON-LD body answered in API version 2.3.0 is checked against the ontology's shapes
 * (`assertConforms`), so no test can forget to; the shapes are 2.3.0's, which a 2.2.0 answer (without
 * what 2.3.0 added) does not meet by design.
 */
export async function oneRecord(url: string, request: OneRecordRequest = {}): Promise<OneRecordAnswer> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.accept !== null) headers.accept = request.accept ?? "application/ld+json";
  if (request.token) headers.authorization = `Bearer ${request.token}`;
  let body: string | undefined;
  if (request.body !== undefined) {
    body = typeof request.body === "string" ? request.body : JSON.stringify(request.body);
    if (request.contentType !== null) headers["content-type"] = request.contentType ?? "application/ld+json";
  }
  const res = await fetch(url, {
    method: request.method ?? (body === undefined ? "GET" : "POST"),
    headers,
    ...(body === undefined ? {} : { body }),
    redirect: "manual",
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  const answer = { status: res.status, headers: res.headers, body: parseOrUndefined(text), text };
  const answered: unknown = answer.body;
  if (typeof answered === "object" && answered !== null && isJsonLd230(res.headers.get("content-type")))
    await assertConforms(answered);
  return answer;
}

/** application/ld+json in version 2.3.0, whatever other parameters (charset…) the answer names. */
function isJsonLd230(contentType: string | null): boolean {
  const [media, ...parameters] = (contentType ?? "").split(";").map((part) => part.trim().toLowerCase());
  return media === "application/ld+json" && parameters.includes("version=2.3.0");
}

function parseOrUndefined(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
