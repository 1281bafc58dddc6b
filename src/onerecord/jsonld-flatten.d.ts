/**
 * jsonld.js's flattening step alone, for a body already expanded (its public flatten() expands its
 * input first). An internal module of the version package.json pins: a new version is checked by
 * test/onerecord/jsonld-worst-case.test.ts, which compares the two.
 */
declare module "jsonld/lib/flatten" {
  export function flatten(expanded: unknown): Array<Record<string, unknown>>;
}
