import { type Attributes, context, type Span, SpanStatusCode, trace } from "@opentelemetry/api";
import {
  defaultFieldResolver,
  type ExecutionResult,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  isObjectType,
  type OperationDefinitionNode,
} from "graphql";
import { activeTracer, failSpan, isSampled } from "./spans";

// GraphQL's semantic conventions are still "development" (not in the stable export): the names are
// copied here, as OpenTelemetry advises for incubating attributes.
const ATTR_GRAPHQL_OPERATION_TYPE = "graphql.operation.type";
const ATTR_GRAPHQL_OPERATION_NAME = "graphql.operation.name";
/** Not conventions: the resolver spans' own attributes. */
const ATTR_GRAPHQL_FIELD_NAME = "graphql.field.name";
const ATTR_GRAPHQL_FIELD_PATH = "graphql.field.path";
const ATTR_GRAPHQL_PARENT_TYPE = "graphql.field.parent_type";

/**
 * Runs one operation inside an INTERNAL span named "<type> <name>" ("query stations"), active while
 * it executes, so its resolvers' spans are its children; marked as failed when the answer has
 * errors. With tracing off, or outside a sampled trace: `execute()` alone.
 */
export function executeInSpan(
  operation: OperationDefinitionNode | undefined,
  execute: () => ExecutionResult | Promise<ExecutionResult>,
): ExecutionResult | Promise<ExecutionResult> {
  const tracer = activeTracer();
  if (tracer === undefined) return execute();
  const type = operation?.operation ?? "operation";
  const name = operation?.name?.value;
  const span = tracer.startSpan(name ? `${type} ${name}` : type, {
    attributes: { [ATTR_GRAPHQL_OPERATION_TYPE]: type, ...(name ? { [ATTR_GRAPHQL_OPERATION_NAME]: name } : {}) },
  });
  if (!isSampled(span)) {
    span.end();
    return execute();
  }
  const finish = (result: ExecutionResult): ExecutionResult => {
    const errors = result.errors ?? [];
    if (errors.length > 0)
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: errors.length === 1 ? errors[0]!.message : `${errors.length} errors`,
      });
    span.end();
    return result;
  };
  return settle(span, () => context.with(trace.setSpan(context.active(), span), execute), finish);
}

const tracedSchemas = new WeakSet<GraphQLSchema>();

/**
 * Wraps the field resolvers of the schema's object types, in place, to give the ones that do real work
 * a span inside a sampled operation's span:
 * - every root field (Query, Mutation): a span started before it runs and active while it does, so
 *   what it calls (the ingestion transaction of a mutation) is its child;
 * - any other field only when it answers with a promise (it waits for a DataLoader batch, a query):
 *   the span starts when the resolver was called and ends when the promise settles. Fields answered at
 *   once (properties, computations such as `openAt`) get none: a list of stations would otherwise be
 *   thousands of spans of microseconds.
 * Nested spans are children of the operation's span (a resolver runs in the context its parent's
 * promise was continued in), and carry their path in `graphql.field.path`.
 *
 * The compiled executor (graphql-core/compiled-executor.ts) calls the resolvers a query was compiled
 * with, so this must run before the first operation: a query compiled earlier would never call the
 * wrappers. Outside an operation span (live events rendered over websockets, tracing off) each
 * wrapper costs one check of the active span. Does nothing while tracing is off.
 */
export function traceResolvers(schema: GraphQLSchema): void {
  if (activeTracer() === undefined || tracedSchemas.has(schema)) return;
  tracedSchemas.add(schema);
  const roots = new Set<unknown>([schema.getQueryType(), schema.getMutationType()]);
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith("__")) continue;
    const isRoot = roots.has(type);
    for (const field of Object.values(type.getFields())) {
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = isRoot ? rootFieldInSpan(resolve) : awaitedFieldInSpan(resolve);
    }
  }
}

type Resolver = GraphQLFieldResolver<unknown, unknown>;

function rootFieldInSpan(resolve: Resolver): Resolver {
  return (source, args, contextValue, info) => {
    const tracer = activeTracer();
    const parent = tracer && trace.getActiveSpan();
    if (parent === undefined || !isSampled(parent)) return resolve(source, args, contextValue, info);
    const span = tracer!.startSpan(spanName(info), { attributes: fieldAttributes(info) });
    return settle(
      span,
      () => context.with(trace.setSpan(context.active(), span), () => resolve(source, args, contextValue, info)),
      endSpan(span),
    );
  };
}

function awaitedFieldInSpan(resolve: Resolver): Resolver {
  return (source, args, contextValue, info) => {
    const startTime = performance.now();
    const result = resolve(source, args, contextValue, info);
    if (!isPromiseLike(result)) return result;
    const tracer = activeTracer();
    const parent = tracer && trace.getActiveSpan();
    if (parent === undefined || !isSampled(parent)) return result;
    const span = tracer!.startSpan(spanName(info), { attributes: fieldAttributes(info), startTime });
    const end = endSpan(span);
    result.then(end, (error: unknown) => end(undefined, error));
    return result;
  };
}

/** Calls `run`, then `finish` with its answer (when a promise settles); a throw fails the span and ends it. */
function settle<T, R>(span: Span, run: () => T | Promise<T>, finish: (value: T) => R): R | Promise<R> {
  let result: T | Promise<T>;
  try {
    result = run();
  } catch (error) {
    failSpan(span, error);
    span.end();
    throw error;
  }
  if (!isPromiseLike(result)) return finish(result);
  return Promise.resolve(result).then(finish, (error: unknown) => {
    failSpan(span, error);
    span.end();
    throw error;
  });
}

function endSpan(span: Span) {
  return <T>(value: T, error?: unknown): T => {
    if (error !== undefined) failSpan(span, error);
    span.end();
    return value;
  };
}

function spanName(info: GraphQLResolveInfo): string {
  return `${info.parentType.name}.${info.fieldName}`;
}

function fieldAttributes(info: GraphQLResolveInfo): Attributes {
  return {
    [ATTR_GRAPHQL_FIELD_NAME]: info.fieldName,
    [ATTR_GRAPHQL_PARENT_TYPE]: info.parentType.name,
    [ATTR_GRAPHQL_FIELD_PATH]: pathOf(info.path),
  };
}

/** "subscriptions.items.0.deliveryCounts" */
function pathOf(path: GraphQLResolveInfo["path"] | undefined): string {
  const keys: Array<string | number> = [];
  for (let at = path; at !== undefined; at = at.prev) keys.push(at.key);
  return keys.reverse().join(".");
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}
