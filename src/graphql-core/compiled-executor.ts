import { createHash } from "node:crypto";
import {
  type DocumentNode,
  execute,
  type ExecutionArgs,
  type ExecutionResult,
  getNamedType,
  getOperationAST,
  GraphQLError,
  type GraphQLSchema,
  isInputObjectType,
  isInputType,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  type SelectionSetNode,
  typeFromAST,
  valueFromAST,
} from "graphql";
import { inspect } from "graphql/jsutils/inspect";
import { type CompiledQuery, compileQuery, isCompiledQuery } from "graphql-jit";
import { limitFieldsByDeadline } from "./time-limit";
import { saturatingAdd } from "./walk-budget";

/**
 * Queries run by graphql-jit: a document is compiled into JavaScript specialised to its selections the
 * second time its text and operation are seen, kept while it stays among the most recently used, and
 * run for every request that sends the same text and operation. The first time, it runs on graphql-js
 * and is only marked as seen once, in a list of its own (MAX_SEEN_ONCE): a compilation takes time
 * that no deadline checks, wasted on a text never sent again (a client varying a comment),
 * and a stream of such texts pushes out only one another's marks, never a compiled query. The answers
 * are graphql-js's, and the limits hold as with graphql-js:
 * - Every field is resolved through the schema's own `resolve`, so the time limit's wrapper
 *   (time-limit.ts, put on every field of the schema's object types before anything is compiled)
 *   checks the deadline at each field. graphql-jit inlines a field only when it has no `resolve`, and
 *   after the wrapping none has. A compiled query keeps the resolvers it was compiled with: wrapping
 *   resolvers later would not reach it.
 * - What fails before any resolver runs — no such operation, several without a name, variables that
 *   do not coerce — is answered by graphql-js's `execute`, whose checks fail the same way and run
 *   nothing, so those errors are its own (Apollo tells a bad variable from other errors by their form).
 * - An error thrown by a resolver is rebuilt as graphql-js's `locatedError` builds it: a GraphQLError
 *   with the field's path and locations, the thrown error as `originalError`, and its extensions.
 * - Any other outcome with errors is answered by running the query again on graphql-js: two errors or
 *   more (graphql-jit resolves every field, where graphql-js stops resolving an object's remaining
 *   fields once a non-null one has failed, and lists errors of non-null fields last, so which errors
 *   are reported and in what order could differ), or an error graphql-jit raised itself (null in a
 *   non-null field, a value that is not a list, a scalar that cannot serialise: its messages are
 *   not always graphql-js's). With one resolver's error, or none, the answers cannot differ, though
 *   graphql-jit may have resolved fields graphql-js would have skipped. Queries only read; the second
 *   run has the same context (its DataLoaders answer from their cache) and the same deadline, so a
 *   query that ran out of time in the first run fails at once.
 * - graphql-jit coerces variables its own way. Where that is known to differ, the operation runs on
 *   graphql-js (`variablesCompile`).
 * Mutations run on graphql-js: after a non-null mutation field failed, graphql-jit still runs the
 * next ones (answering, as graphql-js does, with null data), where graphql-js stops. So do
 * subscription operations, and documents too long or too large to compile (below).
 */
export interface CompiledExecutor {
  /**
   * Executes `args` like graphql's `execute`. `source`: the text `args.document` was parsed from, the
   * cache key; without it the operation runs on graphql-js.
   */
  execute(args: ExecutionArgs, source: string | undefined): ExecutionResult | Promise<ExecutionResult>;
  /**
   * Operations kept (compiled, or known to run on graphql-js), the fields their compiled code selects,
   * compilations so far (a repeated document is compiled once while kept), and operations seen once.
   */
  stats(): { size: number; fields: number; compilations: number; seenOnce: number };
}

/** Operations kept, least recently used dropped first (clients send the same few operations). */
export const MAX_COMPILED_OPERATIONS = 500;
/**
 * Operations marked as seen once, oldest dropped first: a text is compiled if it comes again before
 * this many other new ones. A mark is a digest of the key, not the text: a thousand texts of up to
 * 16 KiB, most never sent again, would hold megabytes.
 */
export const MAX_SEEN_ONCE = 1_000;
/** Longer documents run on graphql-js: they are rarely repeated, and their text is the cache key. */
export const MAX_COMPILED_SOURCE_CHARS = 16 * 1024;
/**
 * Compiled code and the time to compile it grow with the fields selected, fragments expanded where
 * they are spread (BENCHMARKS.md, "Costs behind the GraphQL bounds"). A query selecting more than
 * `MAX_COMPILED_FIELDS` runs on graphql-js, which bounds one compilation (it happens before any field
 * checks the deadline); the cache keeps at most `MAX_CACHED_FIELDS` fields' worth.
 */
export const MAX_COMPILED_FIELDS = 2_000;
export const MAX_CACHED_FIELDS = 20_000;

/**
 * A compiled query, or "interpret": graphql-js runs it (graphql-jit could not compile it, or it should
 * not, see above). `fields`: what it counts against MAX_CACHED_FIELDS.
 */
type Entry = { readonly query: CompiledQuery; readonly fields: number } | "interpret";

const executors = new WeakMap<GraphQLSchema, CompiledExecutor>();
/** Over every executor of the process (for tests and metrics): compilations, and answers given by compiled code. */
const totals = { compilations: 0, compiledAnswers: 0 };

/** The one executor of a schema, shared by both transports (HTTP through Apollo, websockets). */
export function compiledExecutorFor(schema: GraphQLSchema): CompiledExecutor {
  let executor = executors.get(schema);
  if (!executor) executors.set(schema, (executor = createCompiledExecutor(schema)));
  return executor;
}

export function compiledExecutionTotals(): { readonly compilations: number; readonly compiledAnswers: number } {
  return { ...totals };
}

function createCompiledExecutor(schema: GraphQLSchema): CompiledExecutor {
  // Before the first compilation, so that every compiled query calls the deadline check.
  limitFieldsByDeadline(schema);
  const entries = new Map<string, Entry>();
  /** Digests of the keys seen once, oldest first (a key leaves when it is seen again). */
  const seenOnce = new Set<string>();
  let cachedFields = 0;
  let compilations = 0;

  /** The entry for the operation, or "interpret" without one when it is seen for the first time. */
  function entryFor(args: ExecutionArgs, operation: OperationDefinitionNode, source: string): Entry {
    const operationName = operation.name?.value;
    // Names are never empty: "" stands for the one anonymous operation.
    const key = `${operationName ?? ""}\u0000${source}`;
    let entry = entries.get(key);
    if (entry !== undefined) {
      entries.delete(key); // most recently used last: eviction takes the first
      entries.set(key, entry);
      return entry;
    }
    const digest = createHash("sha256").update(key).digest("base64");
    if (!seenOnce.delete(digest)) {
      seenOnce.add(digest);
      if (seenOnce.size > MAX_SEEN_ONCE) seenOnce.delete(seenOnce.values().next().value!);
      return "interpret";
    }
    const fields = fieldsSelected(args.document, operation);
    entry = "interpret";
    if (fields <= MAX_COMPILED_FIELDS && variablesCompile(schema, operation)) {
      compilations++;
      totals.compilations++;
      const compiled = compileQuery(schema, args.document, operationName, {
        // Its own error objects are rebuilt below; their stacks would be thrown away.
        disablingCapturingStackErrors: true,
      });
      if (isCompiledQuery(compiled)) entry = { query: compiled, fields };
    }
    entries.set(key, entry);
    if (entry !== "interpret") cachedFields += entry.fields;
    for (const [oldKey, old] of entries) {
      if (entries.size <= MAX_COMPILED_OPERATIONS && cachedFields <= MAX_CACHED_FIELDS) break;
      entries.delete(oldKey);
      if (old !== "interpret") cachedFields -= old.fields;
    }
    return entry;
  }

  return {
    execute(args, source) {
      const operation = getOperationAST(args.document, args.operationName);
      if (
        operation?.operation !== OperationTypeNode.QUERY ||
        source === undefined ||
        source.length > MAX_COMPILED_SOURCE_CHARS ||
        args.fieldResolver ||
        args.typeResolver
      )
        return execute(args);
      const entry = entryFor(args, operation, source);
      if (entry === "interpret") return execute(args);
      const result = entry.query.query(args.rootValue, args.contextValue, args.variableValues);
      const finish = (answer: ExecutionResult) => {
        const errors = answer.errors ?? [];
        if (!("data" in answer) || errors.length > 1 || (errors.length === 1 && errors[0]!.originalError === undefined))
          return execute(args);
        totals.compiledAnswers++;
        // `errors` before `data`, as graphql-js has them: answers are serialised in key order.
        return errors.length === 0 ? answer : { errors: [asGraphQLJsError(errors[0]!)], data: answer.data };
      };
      return "then" in result ? result.then(finish) : finish(result);
    },
    stats: () => ({ size: entries.size, fields: cachedFields, compilations, seenOnce: seenOnce.size }),
  };
}

/**
 * The fields `operation` selects, each fragment counted wherever it is spread (what graphql-jit
 * compiles code for). Each fragment is counted once and its count reused at every spread, so the
 * walk is linear in the document; counts stop growing at 2^53 − 1.
 */
function fieldsSelected(document: DocumentNode, operation: OperationDefinitionNode): number {
  const fragments = new Map<string, SelectionSetNode>();
  for (const definition of document.definitions)
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition.selectionSet);
  const counted = new Map<string, number>();
  // A cycle is a validation error; cutting it keeps a walk of an unvalidated document finite.
  const open = new Set<string>();
  const fragmentCount = (name: string): number => {
    const known = counted.get(name);
    if (known !== undefined) return known;
    const fragment = fragments.get(name);
    if (!fragment || open.has(name)) return 0;
    open.add(name);
    const count = countIn(fragment);
    open.delete(name);
    counted.set(name, count);
    return count;
  };
  const countIn = (selectionSet: SelectionSetNode): number => {
    let count = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD)
        count = saturatingAdd(count, selection.selectionSet ? 1 + countIn(selection.selectionSet) : 1);
      else if (selection.kind === Kind.INLINE_FRAGMENT) count = saturatingAdd(count, countIn(selection.selectionSet));
      else count = saturatingAdd(count, fragmentCount(selection.name.value));
    }
    return count;
  };
  return countIn(operation.selectionSet);
}

/**
 * Whether graphql-jit coerces this operation's variables as graphql-js does. It writes a variable's
 * default into its code as JSON, so a default JSON cannot carry (a DateTimeISO default is a Date)
 * would reach the resolver as something else; it refuses a non-null variable that is left out though
 * it has a default, where graphql-js takes the default; and it has its own coercion of input objects
 * (none of this schema's queries takes one).
 */
function variablesCompile(schema: GraphQLSchema, operation: OperationDefinitionNode): boolean {
  for (const definition of operation.variableDefinitions ?? []) {
    const type = typeFromAST(schema, definition.type);
    if (!type || !isInputType(type) || isInputObjectType(getNamedType(type))) return false;
    if (definition.defaultValue === undefined) continue;
    if (definition.type.kind === Kind.NON_NULL_TYPE) return false;
    if (!isJsonValue(valueFromAST(definition.defaultValue, type))) return false;
  }
  return true;
}

/** Whether JSON carries `value` unchanged. */
function isJsonValue(value: unknown): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isJsonValue);
  if (typeof value !== "object") return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return (prototype === Object.prototype || prototype === null) && Object.values(value).every(isJsonValue);
}

/**
 * A resolver's error (graphql-jit's own GraphQLError subclass, without `nodes`, with `extensions` only
 * when the thrown error had some) as graphql-js's `locatedError` makes it.
 */
function asGraphQLJsError(error: GraphQLError): GraphQLError {
  const raw: unknown = error.originalError;
  if (raw instanceof GraphQLError && Array.isArray(raw.path)) return raw;
  const original = raw instanceof Error ? raw : new Error(`Unexpected error value: ${inspect(raw)}`);
  const located = new GraphQLError(original.message, { path: error.path, originalError: original });
  // graphql-js derives them from the field nodes, which graphql-jit does not keep; it gives the same locations.
  (located as { locations: GraphQLError["locations"] }).locations = error.locations?.length
    ? error.locations
    : undefined;
  return located;
}
