import { GraphQLError, NoSchemaIntrospectionCustomRule, type ValidationRule } from "graphql";
import type { Config } from "../config";
import { AppError } from "../errors";
import { loadOperationAllowList, type OperationAllowList } from "./allow-list";
import { depthLimit } from "./depth-limit";
import { noConditionalSubscriptionRoot } from "./subscription-root";
import { anonymousLimitsOf, MAX_ALIASED_COST, type OperationLimits } from "./operation-limits";

/**
 * Operations in one request sent without a key (or with one that does not authenticate): a batch
 * would multiply what one request of the address's budget asks for by GRAPHQL_MAX_BATCH.
 */
export const ANONYMOUS_MAX_BATCH = 1;

/** One set of GraphQL rules, applied by both transports (HTTP through Apollo, websockets through graphql-ws). */
export interface GraphQLPolicy {
  readonly introspection: boolean;
  /** Depth, no @skip/@include on a subscription's root, and no introspection when it is off; added to graphql-js's own rules. */
  readonly validationRules: readonly ValidationRule[];
  readonly limits: OperationLimits;
  /** The limits of an operation over HTTP without a key (`anonymousLimitsOf`). */
  readonly anonymousLimits: OperationLimits;
  readonly maxBatch: number;
  /** Operations in one request over HTTP without a key (ANONYMOUS_MAX_BATCH). */
  readonly anonymousMaxBatch: number;
  readonly timeLimitMs: number;
  /** Tokens one document may hold (graphql-js's `parse` option): every parse of a request's document is given it. */
  readonly maxTokens: number;
  readonly allowList: OperationAllowList | undefined;
}

export function createGraphQLPolicy(
  config: Pick<Config, "graphqlIntrospection" | "graphqlLimits" | "graphqlOperationsFile">,
): GraphQLPolicy {
  const { maxDepth, maxCost, maxAliases, maxListArgument, maxBatch, timeLimitMs, maxTokens } = config.graphqlLimits;
  const limits: OperationLimits = {
    maxCost,
    maxAliases,
    maxListArgument,
    maxAliasedCost: Math.min(maxCost, MAX_ALIASED_COST),
  };
  return {
    introspection: config.graphqlIntrospection,
    validationRules: [
      depthLimit(maxDepth),
      noConditionalSubscriptionRoot,
      ...(config.graphqlIntrospection ? [] : [NoSchemaIntrospectionCustomRule]),
    ],
    limits,
    anonymousLimits: anonymousLimitsOf(limits),
    maxBatch,
    anonymousMaxBatch: Math.min(maxBatch, ANONYMOUS_MAX_BATCH),
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
