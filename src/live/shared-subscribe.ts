import { createSourceEventStream, type DocumentNode, execute, type ExecutionArgs, type ExecutionResult, print } from "graphql";

/** How many (event, operation) results are kept for sharing; old ones fall out first. */
const MAX_SHARED_RESULTS = 5_000;

/**
 * graphql-js `subscribe`, except that the result for one source event and one operation (document
 * text, operation name, variables) is executed once and shared by every subscriber that asked the
 * same: 5,000 dashboards watching one AWB cost one execution per milestone, not 5,000. Sound only
 * for subscription fields whose result depends on the event alone, not on the caller (ours: the
 * caller is checked when the subscription starts).
 */
export function createSharedSubscribe(keyOf: (payload: unknown) => string | undefined) {
  const documentText = new WeakMap<DocumentNode, string>();
  const results = new Map<string, ExecutionResult>();

  const operationKey = (args: ExecutionArgs) => {
    let text = documentText.get(args.document);
    if (text === undefined) {
      text = print(args.document);
      documentText.set(args.document, text);
    }
    return `${args.operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}\u0000${text}`;
  };

  return async function subscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
    const source = await createSourceEventStream(args);
    if (!(Symbol.asyncIterator in source)) return source as ExecutionResult;
    const operation = operationKey(args);
    const events = source as AsyncGenerator<unknown>;
    async function* results$(): AsyncGenerator<ExecutionResult> {
      try {
        for await (const payload of events) {
          const eventKey = keyOf(payload);
          const key = eventKey === undefined ? undefined : `${eventKey}\u0000${operation}`;
          let result = key === undefined ? undefined : results.get(key);
          if (result === undefined) {
            result = (await execute({ ...args, rootValue: payload })) as ExecutionResult;
            if (key !== undefined && !result.errors) {
              results.set(key, result);
              if (results.size > MAX_SHARED_RESULTS) results.delete(results.keys().next().value!);
            }
          }
          yield result;
        }
      } finally {
        await events.return?.(undefined);
      }
    }
    return results$();
  };
}
