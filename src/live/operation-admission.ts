import type { DocumentNode, GraphQLError, GraphQLSchema } from "graphql";
import type { SubscribePayload } from "graphql-ws";
import { AppError } from "../errors";
import { checkOperationLimits } from "../graphql-core/operation-limits";
import { graphqlErrorOf, type GraphQLPolicy } from "../graphql-core/policy";
import type { DocumentCache } from "./document-cache";

/**
 * The same rules for a socket's operation as over HTTP: the allow-list, parsing, the operation
 * limits (which need the variables), then validation with our rules. The limits come before
 * validation's errors, so an abusive operation is refused for what it is whatever else is wrong with it.
 */
export function admitOperation(
  payload: SubscribePayload,
  rules: { schema: GraphQLSchema; policy: Pick<GraphQLPolicy, "allowList" | "limits">; documents: DocumentCache },
): { document: DocumentNode } | { errors: readonly GraphQLError[] } {
  const { schema, policy, documents } = rules;
  try {
    policy.allowList?.resolve({ query: payload.query }); // throws OPERATION_NOT_ALLOWED
  } catch (error) {
    if (error instanceof AppError) return { errors: [graphqlErrorOf(error)] };
    throw error;
  }
  const checked = documents.documentOf(payload.query);
  if ("syntaxErrors" in checked) return { errors: checked.syntaxErrors };
  const problem = checkOperationLimits(
    schema,
    checked.document,
    payload.operationName,
    payload.variables,
    policy.limits,
  );
  if (problem) return { errors: [graphqlErrorOf(problem)] };
  if (checked.validationErrors.length > 0) return { errors: checked.validationErrors };
  return { document: checked.document };
}
