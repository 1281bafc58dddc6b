/** What the chain's walkers read of each error: all optional, none trusted to have a type. */
export interface ChainedError {
  readonly name?: unknown;
  readonly code?: unknown;
  readonly message?: unknown;
  readonly cause?: unknown;
}

/**
 * `error`, then the error it names as its `cause`, then that one's, nearest first: at most `maxDepth`
 * of them, ending at the first that is not an object. Bounded because a cause chain can be a cycle.
 */
export function* causesOf(error: unknown, maxDepth: number): Generator<ChainedError> {
  let link = error;
  for (let depth = 0; depth < maxDepth && typeof link === "object" && link !== null; depth++) {
    const chained: ChainedError = link;
    yield chained;
    link = chained.cause;
  }
}
