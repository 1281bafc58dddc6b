import { getOperationAST, OperationTypeNode, parse, type DocumentNode, type ExecutionResult } from "graphql";
import { createClient, type Client } from "graphql-ws";
import { graphqlWebsocketUrl } from "../shared/gateway-url";

type Params = { query: string; operationName?: string | null; variables?: unknown };
type Result = ExecutionResult;

/** GraphiQL types results as graphql-js's, but shows only each error's message. */
const errorResult = (...messages: string[]): Result =>
  ({ errors: messages.map((message) => ({ message })) }) as unknown as Result;

/**
 * GraphiQL's fetcher for this gateway: queries and mutations over HTTP, subscriptions over
 * graphql-ws. Both carry the Authorization header from the IDE's headers tab; the websocket sends it
 * in connection_init, as the gateway expects (CONTRACT §5), and is reopened when the header changes.
 */
export function createGatewayFetcher(): (
  params: Params,
  opts?: { headers?: Record<string, unknown>; documentAST?: DocumentNode },
) => Promise<Result> | AsyncIterable<Result> {
  let socket: { authorization: string | undefined; client: Client } | undefined;

  const clientFor = (authorization: string | undefined): Client => {
    if (socket && socket.authorization === authorization) return socket.client;
    void socket?.client.dispose();
    const client = createClient({
      url: graphqlWebsocketUrl(),
      connectionParams: authorization ? { authorization } : {},
      lazy: true,
      retryAttempts: 0,
    });
    socket = { authorization, client };
    return client;
  };

  return (params, opts) => {
    const headers = Object.fromEntries(
      Object.entries(opts?.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]),
    );
    if (isSubscription(params, opts?.documentAST))
      return subscribe(clientFor(headers.authorization), params, headers.authorization !== undefined);
    return fetch("/graphql", {
      method: "POST",
      headers: {
        accept: "application/graphql-response+json, application/json",
        ...headers,
        "content-type": "application/json",
      },
      body: JSON.stringify(params),
    }).then((response) => response.json() as Promise<Result>);
  };
}

function isSubscription(params: Params, document: DocumentNode | undefined): boolean {
  try {
    const operation = getOperationAST(document ?? parse(params.query), params.operationName ?? undefined);
    return operation?.operation === OperationTypeNode.SUBSCRIPTION;
  } catch {
    return false; // unparseable: let the server say what is wrong with it
  }
}

/** The subscription's results; a socket closed by the gateway (a refused key, 4401) becomes an error result. */
async function* subscribe(client: Client, params: Params, sentKey: boolean): AsyncGenerator<Result> {
  try {
    for await (const result of client.iterate({
      query: params.query,
      operationName: params.operationName ?? null,
      variables: (params.variables ?? {}) as Record<string, unknown>,
    }))
      yield result as Result;
  } catch (error) {
    if (error && typeof error === "object" && "code" in error) {
      const { code, reason } = error as { code: number; reason?: string };
      yield errorResult(closedSocketMessage(code, reason, sentKey));
    } else if (Array.isArray(error)) yield errorResult(...error.map((e: { message?: string }) => e.message ?? "error"));
    else yield errorResult(error instanceof Error ? error.message : String(error));
  }
}

const IN_HEADERS_TAB = 'in the Headers tab below, as {"Authorization": "Bearer <key>"}';

/**
 * What the IDE says when the gateway closes the subscription's socket. For a refused key, where the key
 * goes in this page, not the close reason, which tells a websocket client what to send in connection_init.
 */
function closedSocketMessage(code: number, reason: string | undefined, sentKey: boolean): string {
  if (code === 4401 && !sentKey)
    return `Subscriptions need an API key with the events:read scope: put it ${IN_HEADERS_TAB}.`;
  if (code === 4401)
    return `The gateway did not accept the API key in the Headers tab (unknown or revoked): put a valid one there, as {"Authorization": "Bearer <key>"}.`;
  if (code === 4403)
    return `${reason || "The API key lacks the scope"}: subscriptions need a key with the events:read scope, ${IN_HEADERS_TAB}.`;
  return `The websocket was closed (${code}): ${reason || "no reason given"}`;
}
