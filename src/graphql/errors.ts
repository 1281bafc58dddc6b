import { unwrapResolverError } from "@apollo/server/errors";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { AppError, type ErrorCode } from "../errors";

/** Codes that Apollo and graphql-js give to a malformed operation: all mean "your request is invalid". */
const CLIENT_ERROR_CODES = new Set(["GRAPHQL_PARSE_FAILED", "GRAPHQL_VALIDATION_FAILED", "BAD_USER_INPUT", "BAD_REQUEST", "PERSISTED_QUERY_NOT_FOUND", "PERSISTED_QUERY_NOT_SUPPORTED", "OPERATION_RESOLUTION_FAILURE"]);

/**
 * Gives every GraphQL error a code from the one error table and hides internals: an error that is
 * not an AppError or a request error becomes INTERNAL with a neutral message (the log has the cause).
 */
export function formatGraphQLError(formatted: GraphQLFormattedError, error: unknown, onInternal?: (cause: unknown) => void): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof AppError) {
    return {
      message: original.message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      ...(formatted.path ? { path: formatted.path } : {}),
      extensions: {
        ...original.extensions,
        code: original.code,
        ...(original.errors ? { errors: original.errors } : {}),
        ...(original.retryAfterSeconds !== undefined ? { retryAfterSeconds: original.retryAfterSeconds } : {}),
      },
    };
  }
  const apolloCode = typeof formatted.extensions?.code === "string" ? formatted.extensions.code : undefined;
  // Apollo replaces a validation rule's own code with GRAPHQL_VALIDATION_FAILED; the original keeps it.
  let ruleCode: unknown;
  for (let e: unknown = original, depth = 0; e instanceof GraphQLError && depth < 3 && ruleCode !== "QUERY_TOO_COMPLEX"; e = e.originalError, depth++) ruleCode = e.extensions?.code;
  if (apolloCode === "QUERY_TOO_COMPLEX" || ruleCode === "QUERY_TOO_COMPLEX") {
    return { message: formatted.message, ...(formatted.locations ? { locations: formatted.locations } : {}), extensions: { code: "QUERY_TOO_COMPLEX" satisfies ErrorCode } };
  }
  const isRequestError = (apolloCode !== undefined && CLIENT_ERROR_CODES.has(apolloCode)) || (original instanceof GraphQLError && original.path === undefined && apolloCode !== "INTERNAL_SERVER_ERROR");
  if (isRequestError) {
    return { message: formatted.message, ...(formatted.locations ? { locations: formatted.locations } : {}), extensions: { code: "VALIDATION_FAILED" satisfies ErrorCode } };
  }
  onInternal?.(original);
  return {
    message: "An unexpected error occurred",
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: "INTERNAL" satisfies ErrorCode },
  };
}
