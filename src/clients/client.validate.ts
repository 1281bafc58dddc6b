import { readCallbackPrefix } from "../domain/callback-prefix";
import { validationError } from "../errors";
import { isScope, SCOPES, type Scope } from "./credentials";

/** A key's scopes: at least one, each known; duplicates dropped. */
export function parseScopes(values: readonly string[]): Scope[] {
  const unknown = values.filter((s) => !isScope(s));
  if (unknown.length > 0)
    throw validationError([
      { field: "scopes", message: `unknown scope(s) ${unknown.join(", ")}; known: ${SCOPES.join(", ")}` },
    ]);
  if (values.length === 0) throw validationError([{ field: "scopes", message: "must name at least one scope" }]);
  return [...new Set(values)] as Scope[];
}

/** Registered callback prefixes: "*" or http(s) URLs (domain/callback-prefix.ts), each checked. */
export function parsePrefixes(values: readonly string[]): string[] {
  const problems = values.flatMap((p, i) => {
    const read = readCallbackPrefix(p);
    if (!("problem" in read)) return [];
    const shown = p.length > 200 ? `${JSON.stringify(p.slice(0, 200))}…` : JSON.stringify(p);
    return [{ field: `callbackPrefixes[${i}]`, message: `${read.problem}, got ${shown}` }];
  });
  if (problems.length > 0) throw validationError(problems);
  if (values.length === 0)
    throw validationError([{ field: "callbackPrefixes", message: 'must name at least one prefix ("*" for any URL)' }]);
  return [...new Set(values)];
}
