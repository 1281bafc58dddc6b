import { REQUEST_TIMEOUT_MS } from "./http";

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

/** A request to `url` (absolute: a URI the server answered, or base + path) as a ONE Record client sends it. */
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
  return { status: res.status, headers: res.headers, body: parseOrUndefined(text), text };
}

function parseOrUndefined(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
