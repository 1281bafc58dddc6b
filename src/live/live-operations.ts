import { type DocumentNode, execute, type ExecutionResult, type GraphQLSchema, Kind, visit } from "graphql";
import type { LiveMilestone } from "./live-events";

/**
 * Payloads kept per operation, oldest dropped first. A fan-out renders and sends an event in one
 * synchronous pass, so one entry would do for it; the rest serve feeds catching up on recent history.
 */
const PAYLOADS_PER_OPERATION = 256;

/**
 * One subscription operation as sent by clients: the same query text (or, without one, the same
 * DocumentNode), operation name and variables. Every feed of the same operation shares one, and with
 * it one rendering per event.
 */
export interface LiveOperation {
  /**
   * The `payload` of a `next` frame for this event, as JSON: executed the first time it is asked for
   * and kept, so a second caller — concurrent or later — gets the same text or the same promise.
   */
  payloadFor(event: LiveMilestone): string | Promise<string>;
}

interface SharedOperation extends LiveOperation {
  readonly key: string;
  refs: number;
  /** How many times this operation was executed (what sharing saves; read by tests). */
  executions: number;
}

/**
 * The operations of live subscriptions, shared by key while any feed uses them. Sound only for
 * subscription fields whose result depends on the event alone, not on who asked (ours: the caller
 * is checked when the subscription starts), so a payload may be shared between callers.
 */
export function createLiveOperations({
  schema,
  format,
}: {
  schema: GraphQLSchema;
  format: (result: ExecutionResult) => unknown;
}) {
  const documentIds = new WeakMap<DocumentNode, number>();
  let nextDocumentId = 0;
  const operations = new Map<string, SharedOperation>();
  let totalExecutions = 0;

  function create(
    key: string,
    document: DocumentNode,
    operationName: string | null | undefined,
    variableValues: Record<string, unknown> | null | undefined,
  ): SharedOperation {
    const payloads = new Map<string, string | Promise<string>>();
    const render = (event: LiveMilestone): string | Promise<string> => {
      operation.executions++;
      totalExecutions++;
      const result = execute({ schema, document, rootValue: event, contextValue: {}, variableValues, operationName });
      return "then" in result ? result.then((r) => JSON.stringify(format(r))) : JSON.stringify(format(result));
    };
    const operation: SharedOperation = {
      key,
      refs: 0,
      executions: 0,
      payloadFor(event) {
        let payload = payloads.get(event.eventId);
        if (payload === undefined) {
          payload = render(event);
          payloads.set(event.eventId, payload);
          if (typeof payload !== "string") payload.catch(() => payloads.delete(event.eventId));
          if (payloads.size > PAYLOADS_PER_OPERATION) payloads.delete(payloads.keys().next().value!);
        }
        return payload;
      },
    };
    return operation;
  }

  return {
    /**
     * The shared operation for these execution arguments; call `release` when its feed ends. `query`:
     * the text the document was parsed from. With it, operations are shared by text, so a document
     * parsed again (its cache entry evicted) still joins the operation of the same text; without it,
     * by DocumentNode.
     */
    acquire({
      document,
      query,
      operationName,
      variableValues,
    }: {
      document: DocumentNode;
      query?: string | undefined;
      operationName?: string | null;
      variableValues?: Record<string, unknown> | null;
    }): LiveOperation & { release(): void } {
      let source: string;
      if (query !== undefined) source = `t${query}`;
      else {
        let documentId = documentIds.get(document);
        if (documentId === undefined) documentIds.set(document, (documentId = nextDocumentId++));
        source = `d${documentId}`;
      }
      const key = JSON.stringify([source, operationName ?? "", withoutResumeVariables(document, variableValues)]);
      let operation = operations.get(key);
      if (!operation) operations.set(key, (operation = create(key, document, operationName, variableValues)));
      operation.refs++;
      const shared = operation;
      let released = false;
      return {
        payloadFor: (event) => shared.payloadFor(event),
        release() {
          if (released) return;
          released = true;
          if (--shared.refs === 0 && operations.get(key) === shared) operations.delete(key);
        },
      };
    },
    /** Executions so far, over every operation there has been (what sharing saves shows here). */
    executions(): number {
      return totalExecutions;
    },
    get size(): number {
      return operations.size;
    },
  };
}

export type LiveOperations = ReturnType<typeof createLiveOperations>;

/**
 * The variables that can change a payload. A variable used only as a subscription field's `after`
 * argument cannot (it says where a replay starts, not what an event looks like), and reconnecting
 * dashboards each send a different one: leaving it out lets them share renderings. Computed per
 * document once.
 */
const resumeVariablesOf = new WeakMap<DocumentNode, ReadonlySet<string>>();
function withoutResumeVariables(
  document: DocumentNode,
  variables: Record<string, unknown> | null | undefined,
): Record<string, unknown> {
  if (!variables) return {};
  let resume = resumeVariablesOf.get(document);
  if (!resume) {
    const uses = new Map<string, number>();
    const asAfter = new Set<string>();
    visit(document, {
      Variable: (node, _key, parent) => {
        if ((parent as { kind?: string } | undefined)?.kind === Kind.VARIABLE_DEFINITION) return;
        uses.set(node.name.value, (uses.get(node.name.value) ?? 0) + 1);
      },
      Argument: (node) => {
        if (node.name.value === "after" && node.value.kind === Kind.VARIABLE) asAfter.add(node.value.name.value);
      },
    });
    resume = new Set([...asAfter].filter((name) => uses.get(name) === 1));
    resumeVariablesOf.set(document, resume);
  }
  if (resume.size === 0) return variables;
  return Object.fromEntries(Object.entries(variables).filter(([name]) => !resume.has(name)));
}
