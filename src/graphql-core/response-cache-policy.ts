/** Which operations the GraphQL response cache (graphql/response-cache.ts) may answer: declared by a feature's resolver. */
export interface ResponseCachePolicy {
  /** Root query fields whose answers depend only on the versioned data. */
  readonly rootFields: ReadonlySet<string>;
  /**
   * Fields that depend on the clock unless the argument named here has a non-null value (`openAt`
   * without `at`, or with `at: null`, means "now"). A variable pins only when the request gives it a
   * non-null value (or it is omitted and its declared default is a non-null literal).
   */
  readonly timeDependent: ReadonlyMap<string, string>;
}
