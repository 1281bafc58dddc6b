import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from "graphql";
import type { Config } from "../config";
import { AppError } from "../errors";
import { loadOperationAllowList, type OperationAllowList } from "./allow-list";
import { depthLimit } from "./depth-limit";
import { noConditionalSubscriptionRoot } from "./subscription-root";
import type { OperationLimits } from "./operation-limits";

/** One set of GraphQL rules, applied by both transports (HTTP through Apollo, websockets through graphql-ws). */
export interface GraphQLPolicy {
  readonly introspection: boolean;
  /** Depth, no @skip/@include on a subscription's root, and no introspection when it is off; added to graphql-js's own rules. */
  readonly validationRules: readonly ValidationRule[];
  readonly limits: OperationLimits;
  readonly maxBatch: number;
  readonly timeLimitMs: number;
  /** Tokens one document may hold (graphql-js's `parse` option): every parse of a request's document is given it. */
  readonly maxTokens: number;
  readonly allowList: OperationAllowList | undefined;
}

export function createGraphQLPolicy(
  config: Pick<Config, "graphqlIntrospection" | "graphqlLimits" | "graphqlOperationsFile">,
): GraphQLPolicy {
  const { maxDepth, maxCost, maxAliases, maxListArgument, maxBatch, timeLimitMs, maxTokens } = config.graphqlLimits;
  return {
    introspection: config.graphqlIntrospection,
    validationRules: [
      depthLimit(maxDepth),
      noConditionalSubscriptionRoot,
      ...(config.graphqlIntrospection ? [] : [NoSchemaIntrospectionCustomRule]),
    ],
    limits: { maxCost, maxAliases, maxListArgument },
    maxBatch,
    timeLimitMs,
    maxTokens,
    allowList: config.graphqlOperationsFile ? loadOperationAllowList(config.graphqlOperationsFile) : undefined,
  };
}

/**
 * A GraphQL-shaped error from an AppError, for answers given outside resolvers, with
 * `retryAfterSeconds` when the error has one (as resolvers' errors have it). `http` also tells
 * Apollo the status to answer with (Apollo removes that extension from the response).
 */
export function graphqlErrorOf(error: AppError, { http = false } = {}): GraphQLError {
  return new GraphQLError(error.message, {
    extensions: {
      code: error.code,
      ...(error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {}),
      ...(http ? { http: { status: error.status } } : {}),
    },
  });
}

/** What an operation that ran past GRAPHQL_TIME_LIMIT_MS answers, over HTTP and over websockets alike. */
export function operationTimedOut(limitMs: number): AppError {
  return new AppError("OPERATION_TIMED_OUT", `The operation ran longer than its ${limitMs} ms limit`);
}
