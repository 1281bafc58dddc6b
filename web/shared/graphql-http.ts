/** GraphQL over HTTP to this gateway, with the contract's error codes surfaced as GraphQLRequestError. */
export class GraphQLRequestError extends Error {
  constructor(
    message: string,
    /** The error table's code (extensions.code), or NETWORK when the gateway did not answer. */
    readonly code: string,
  ) {
    super(message);
  }
}

interface GraphQLResponse<T> {
  data?: T | null;
  errors?: Array<{ message: string; extensions?: { code?: string } }>;
}

export async function graphqlRequest<T>(
  query: string,
  variables: Record<string, unknown>,
  authorization?: string,
): Promise<T> {
  let response: Response;
  try {
    response = await fetch("/graphql", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json",
        ...(authorization ? { authorization } : {}),
      },
      body: JSON.stringify({ query, variables }),
    });
  } catch (error) {
    throw new GraphQLRequestError(`The gateway did not answer: ${(error as Error).message}`, "NETWORK");
  }
  const body = (await response.json().catch(() => ({}))) as GraphQLResponse<T>;
  const first = body.errors?.[0];
  if (first) throw new GraphQLRequestError(first.message, first.extensions?.code ?? `HTTP_${response.status}`);
  if (!response.ok || body.data == null)
    throw new GraphQLRequestError(`The gateway answered ${response.status}`, `HTTP_${response.status}`);
  return body.data;
}
