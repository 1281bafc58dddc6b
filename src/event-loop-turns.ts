/**
 * Work that runs synchronously to its end takes turns to start: one per turn of the event loop, in the
 * order asked (a GraphQL operation, a station batch's answer, a JSON-LD body's reading).
 *
 * A GraphQL execution runs synchronously to its end when its resolvers do (station reads come from
 * memory), and jsonld.js resolves its own promises as it goes: a request's steps are promise
 * continuations. Requests that reach such work together would otherwise all run in one drain of the
 * microtask queue, with no I/O between them, so a /healthz (or any other caller) would wait for all of
 * them. Taking turns, it waits for one at most. Work of one thread runs one after another anyway:
 * nothing is slower in all.
 */
export interface ExecutionTurns {
  /** Resolves when it is this operation's turn (the next turn of the event loop at the earliest). */
  next(): Promise<void>;
  /** Operations waiting for their turn (for tests). */
  waiting(): number;
}

export function createExecutionTurns(): ExecutionTurns {
  const queue: Array<() => void> = [];
  let scheduled = false;
  // An immediate scheduled from a check phase runs in the next loop iteration, after its poll phase.
  const giveTurn = () => {
    const start = queue.shift();
    if (queue.length > 0) setImmediate(giveTurn);
    else scheduled = false;
    start?.();
  };
  return {
    next: () =>
      new Promise<void>((resolve) => {
        queue.push(resolve);
        if (!scheduled) {
          scheduled = true;
          setImmediate(giveTurn);
        }
      }),
    waiting: () => queue.length,
  };
}
