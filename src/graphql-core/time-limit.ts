import {
  defaultFieldResolver,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  getOperationAST,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  isObjectType,
  OperationTypeNode,
} from "graphql";
import { graphqlErrorOf, operationTimedOut } from "./policy";

/**
 * GRAPHQL_TIME_LIMIT_MS, one mechanism for both transports: every field resolver of the schema's own
 * types is wrapped once, in place, to fail at once when its operation's deadline has passed. An
 * operation has a deadline from `startDeadline` (Apollo's limits-plugin.ts over HTTP,
 * `executeWithinTimeLimit` over websockets) to `endDeadline`, keyed by its context object (one per
 * operation); for every other execution (live event renderings) the wrapper is one WeakMap lookup.
 * Introspection types are shared by every schema and left alone.
 */
export interface Deadline {
  readonly at: number;
  readonly limitMs: number;
  timedOut: boolean;
}

const deadlines = new WeakMap<object, Deadline>();
const limitedSchemas = new WeakSet<GraphQLSchema>();

export function limitFieldsByDeadline(schema: GraphQLSchema): void {
  if (limitedSchemas.has(schema)) return;
  limitedSchemas.add(schema);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    for (const field of Object.values(type.getFields())) {
      const resolve: GraphQLFieldResolver<unknown, unknown> = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context: unknown, info) => {
        const deadline = typeof context === "object" && context !== null ? deadlines.get(context) : undefined;
        if (deadline && (deadline.timedOut || performance.now() > deadline.at)) {
          deadline.timedOut = true;
          throw operationTimedOut(deadline.limitMs);
        }
        return resolve(source, args, context, info);
      };
    }
  }
}

/** Gives the operation running with `context` a deadline `limitMs` from now. */
export function startDeadline(context: object, limitMs: number): Deadline {
  const deadline: Deadline = { at: performance.now() + limitMs, limitMs, timedOut: false };
  deadlines.set(context, deadline);
  return deadline;
}

export function endDeadline(context: object): void {
  deadlines.delete(context);
}

/**
 * Executes a query or mutation with the time limit (the websocket's `execute`), by `run` (graphql's
 * `execute` unless told otherwise: the websocket passes the compiled executor). As over HTTP, a
 * timed-out query answers one OPERATION_TIMED_OUT error; a timed-out mutation keeps its partial data,
 * since the fields that ran have taken effect.
 */
export function executeWithinTimeLimit(
  args: ExecutionArgs,
  limitMs: number,
  run: (args: ExecutionArgs) => ExecutionResult | Promise<ExecutionResult> = execute,
): ExecutionResult | Promise<ExecutionResult> {
  const context = args.contextValue;
  if (limitMs <= 0 || typeof context !== "object" || context === null) return run(args);
  const deadline = startDeadline(context, limitMs);
  const finish = (result: ExecutionResult): ExecutionResult => {
    endDeadline(context);
    if (
      !deadline.timedOut ||
      getOperationAST(args.document, args.operationName)?.operation === OperationTypeNode.MUTATION
    )
      return result;
    return { errors: [graphqlErrorOf(operationTimedOut(limitMs))] };
  };
  let result: ExecutionResult | Promise<ExecutionResult>;
  try {
    result = run(args);
  } catch (error) {
    endDeadline(context);
    throw error;
  }
  if (!("then" in result)) return finish(result);
  return result.then(finish, (error: unknown) => {
    endDeadline(context);
    throw error;
  });
}
