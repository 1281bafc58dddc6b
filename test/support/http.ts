/**
 * Small helpers for talking to a server under test over real HTTP. Every request is aborted after
 * 15 s, so a server that hangs fails the test with a TimeoutError instead of stalling the run.
 */
export const REQUEST_TIMEOUT_MS = 15_000;

export async function getJson(
  url: string,
  init?: RequestInit,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, { ...init, signal: init?.signal ?? AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === "" ? undefined : JSON.parse(text) };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  return getJson(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export async function graphql(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ data?: any; errors?: any[] }> {
  const { body } = await postJson(`${url}/graphql`, { query, variables }, headers);
  return body;
}
