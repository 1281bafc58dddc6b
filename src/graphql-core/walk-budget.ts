/**
 * Selections one walk over an operation (the depth rule, the cost check) may visit before the
 * operation is refused with QUERY_TOO_COMPLEX. The walks measure each fragment once, so they visit a
 * selection of the document at most twice (the depth rule measures a fragment spread both inside and
 * outside introspection); a document within GRAPHQL_MAX_TOKENS stays far below the budget, which
 * bounds a walk whatever the document.
 */
export const MAX_WALKED_SELECTIONS = 50_000;

export const OVER_WALK_BUDGET = `The operation has more than ${MAX_WALKED_SELECTIONS} selections to measure (each fragment counted once)`;

/** Thrown by `WalkBudget.visit` past the budget; the walker catches it and refuses the operation. */
export class WalkOverBudget extends Error {
  constructor() {
    super(OVER_WALK_BUDGET);
  }
}

export interface WalkBudget {
  /** Counts one selection visited; throws WalkOverBudget past MAX_WALKED_SELECTIONS. */
  visit(): void;
}

export function createWalkBudget(): WalkBudget {
  let visits = 0;
  return {
    visit() {
      if (++visits > MAX_WALKED_SELECTIONS) throw new WalkOverBudget();
    },
  };
}

/**
 * Counts with fragments expanded where they are spread can outgrow what a double holds exactly
 * (n fragments each spreading the next twice select 2^n fields): sums and products stop at 2^53 − 1.
 */
export const saturatingAdd = (a: number, b: number): number => Math.min(a + b, Number.MAX_SAFE_INTEGER);
export const saturatingMultiply = (a: number, b: number): number => Math.min(a * b, Number.MAX_SAFE_INTEGER);

/** A count as a message states it: exact below 2^53 − 1, where the saturating arithmetic stops. */
export const countText = (count: number): string =>
  count >= Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER - 1}` : String(count);
