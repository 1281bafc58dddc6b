/**
 * Raw SQL on the same database, past Prisma: for statements on a hot path where Prisma's own cost
 * per call (about a millisecond of this thread's time) dominates (the delivery worker's claim, record
 * and release). Numbered parameters; array parameters need an explicit cast (`$1::uuid[]`).
 */
export interface SqlExecutor {
  query<T>(text: string, params: readonly unknown[]): Promise<T[]>;
  /**
   * Several statements, separated by semicolons, in one round trip (the simple query protocol), run
   * as one implicit transaction: a lock one statement takes is held until the last one ends, and
   * each statement reads what had committed when it started (READ COMMITTED) — after the locks the
   * statements before it waited for. No parameters: values are written in with `db/sql-literal.ts`.
   * Answers the rows of each statement, in order.
   */
  script(text: string): Promise<unknown[][]>;
}
