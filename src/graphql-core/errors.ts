import { unwrapResolverError } from "@apollo/server/errors";
import { GraphQLError, type GraphQLFormattedError } from "graphql";
import { databaseUnavailable, isDatabaseUnavailable } from "../db/availability";
import { AppError, ERROR_TABLE, type ErrorCode } from "../errors";

/** Codes that Apollo and graphql-js give to a malformed operation: all mean "your request is invalid". */
const CLIENT_ERROR_CODES = new Set([
  "GRAPHQL_PARSE_FAILED",
  "GRAPHQL_VALIDATION_FAILED",
  "BAD_USER_INPUT",
  "BAD_REQUEST",
  "PERSISTED_QUERY_NOT_FOUND",
  "PERSISTED_QUERY_NOT_SUPPORTED",
  "OPERATION_RESOLUTION_FAILURE",
]);

/**
 * What graphql-js's parser throws starts with "Syntax Error: " (its `syntaxError`); a document over
 * GRAPHQL_MAX_TOKENS is one of those, but a limit rather than a mistake of syntax.
 */
const SYNTAX_ERROR = /^Syntax Error: /;
const TOKEN_LIMIT = /^Syntax Error: Document contains more tha[nt] \d+ tokens/;

/** The table's code for a request error: a syntax error, a document over the token limit, or another. */
function requestErrorCode(message: string, apolloCode: string | undefined): ErrorCode {
  if (TOKEN_LIMIT.test(message)) return "QUERY_TOO_COMPLEX";
  if (apolloCode === "GRAPHQL_PARSE_FAILED" || SYNTAX_ERROR.test(message)) return "GRAPHQL_PARSE_FAILED";
  return "VALIDATION_FAILED";
}

/**
 * graphql-js's suggestions end a message: ` Did you mean "name"?`, ` Did you mean one of: "a", "b"?`,
 * ` Did you mean the enum value "X"?` (its didYouMean helper; names cannot hold a question mark).
 */
const SUGGESTION = / Did you mean [^?]*\?$/;

/**
 * Gives every GraphQL error a code from the one error table and hides internals: an error that is
 * not an AppError or a request error becomes INTERNAL with a neutral message (the log has the cause).
 * With `hideSuggestions` (introspection off), request errors lose graphql-js's "Did you mean …"
 * suggestions, which would otherwise spell out the schema's field, argument and enum names.
 */
export function formatGraphQLError(
  formatted: GraphQLFormattedError,
  error: unknown,
  onInternal?: (cause: unknown) => void,
  { hideSuggestions = false }: { hideSuggestions?: boolean } = {},
): GraphQLFormattedError {
  const message = hideSuggestions ? formatted.message.replace(SUGGESTION, "") : formatted.message;
  let original = unwrapResolverError(error);
  // graphql-ws wraps an error thrown by a subscription's stream in a GraphQLError without a path.
  if (original instanceof GraphQLError && original.path === undefined && original.originalError instanceof AppError)
    original = original.originalError;
  if (!(original instanceof AppError) && isDatabaseUnavailable(original)) original = databaseUnavailable();
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
  // Our validation rules and pre-execution checks raise GraphQLErrors carrying a code of the table;
  // Apollo replaces such a rule's code with GRAPHQL_VALIDATION_FAILED, and the original keeps it.
  let ownCode: ErrorCode | undefined = isTableCode(apolloCode) ? apolloCode : undefined;
  for (
    let e: unknown = original, depth = 0;
    !ownCode && e instanceof GraphQLError && depth < 3;
    e = e.originalError, depth++
  ) {
    if (isTableCode(e.extensions?.code)) ownCode = e.extensions.code;
  }
  // Apollo's parse failures carry GRAPHQL_PARSE_FAILED, a table code too: a token limit is told apart.
  if (ownCode === "GRAPHQL_PARSE_FAILED") ownCode = requestErrorCode(formatted.message, ownCode);
  if (ownCode && ownCode !== "INTERNAL") {
    return {
      message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: ownCode },
    };
  }
  const isRequestError =
    (apolloCode !== undefined && CLIENT_ERROR_CODES.has(apolloCode)) ||
    (original instanceof GraphQLError && original.path === undefined && apolloCode !== "INTERNAL_SERVER_ERROR");
  if (isRequestError) {
    return {
      message,
      ...(formatted.locations ? { locations: formatted.locations } : {}),
      extensions: { code: requestErrorCode(formatted.message, apolloCode) },
    };
  }
  onInternal?.(original);
  return {
    message: "An unexpected error occurred",
    ...(formatted.path ? { path: formatted.path } : {}),
    extensions: { code: "INTERNAL" satisfies ErrorCode },
  };
}

function isTableCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && Object.hasOwn(ERROR_TABLE, code);
}
