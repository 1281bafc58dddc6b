import { type DocumentNode, Kind, parse, visit } from "graphql";

/**
 * A cache of whole GraphQL responses for operations that read only immutable, public data (station
 * data changes only on import). Keyed by the exact operation text, operation name and variables, and
 * by the data version, so an import invalidates everything at once. Only answers that had no errors
 * are kept. Bounded by entries and bytes, evicting the least recently used.
 */
export interface ResponseCachePolicy {
  /** Root query fields whose answers depend only on the versioned data. */
  readonly rootFields: ReadonlySet<string>;
  /** Fields that depend on the clock unless the argument named here is given (`openAt` without `at`). */
  readonly timeDependent: ReadonlyMap<string, string>;
}

export interface CachedResponse {
  readonly contentType: string;
  readonly body: string;
}

export interface GraphQLRequestBody {
  query?: unknown;
  operationName?: unknown;
  variables?: unknown;
  extensions?: unknown;
}

export function createResponseCache(
  policy: ResponseCachePolicy,
  version: () => number,
  { maxEntries = 2_000, maxBytes = 64 * 1024 * 1024 } = {},
) {
  let entries = new Map<string, CachedResponse>();
  let bytes = 0;
  let cachedVersion = version();
  const verdicts = new Map<string, boolean>(); // query text → cacheable, bounded below

  /** The answer's form depends on the Accept header (application/json or graphql-response+json). */
  function keyOf(body: GraphQLRequestBody, accept: string): string | undefined {
    if (typeof body !== "object" || body === null || typeof body.query !== "string" || body.extensions !== undefined)
      return undefined;
    const name = typeof body.operationName === "string" ? body.operationName : "";
    const variables = body.variables === undefined || body.variables === null ? "" : JSON.stringify(body.variables);
    return `${accept}\u0000${name}\u0000${variables}\u0000${body.query}`;
  }

  function current(): Map<string, CachedResponse> {
    const now = version();
    if (now !== cachedVersion) {
      entries = new Map();
      bytes = 0;
      cachedVersion = now;
    }
    return entries;
  }

  function cacheable(query: string): boolean {
    let verdict = verdicts.get(query);
    if (verdict === undefined) {
      verdict = isCacheable(query, policy);
      if (verdicts.size >= maxEntries) verdicts.clear();
      verdicts.set(query, verdict);
    }
    return verdict;
  }

  return {
    /** The stored answer for this request, if any. */
    get(body: GraphQLRequestBody, accept: string): CachedResponse | undefined {
      const key = keyOf(body, accept);
      if (key === undefined) return undefined;
      const map = current();
      const hit = map.get(key);
      if (hit !== undefined) {
        map.delete(key); // move to the most recently used end
        map.set(key, hit);
      }
      return hit;
    },

    /** Keeps `payload` (the serialised answer) when the operation only reads cacheable fields. */
    store(body: GraphQLRequestBody, accept: string, versionAtStart: number, response: CachedResponse): boolean {
      const key = keyOf(body, accept);
      if (key === undefined || versionAtStart !== version() || !cacheable(body.query as string)) return false;
      if (response.body.includes('"errors":') || response.body.length > maxBytes / 4) return false;
      const map = current();
      map.set(key, response);
      bytes += response.body.length;
      for (const [oldKey, old] of map) {
        if (map.size <= maxEntries && bytes <= maxBytes) break;
        map.delete(oldKey);
        bytes -= old.body.length;
      }
      return true;
    },

    version,
    size: () => current().size,
  };
}

export type ResponseCache = ReturnType<typeof createResponseCache>;

/** A query operation that selects only policy root fields and no clock-dependent field without its argument. */
export function isCacheable(query: string, policy: ResponseCachePolicy): boolean {
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true });
  } catch {
    return false;
  }
  let ok = true;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      if (definition.operation !== "query") return false;
      for (const selection of definition.selectionSet.selections) {
        // Fragments at the root would hide which root fields are read: not worth supporting.
        if (
          selection.kind !== Kind.FIELD ||
          !(policy.rootFields.has(selection.name.value) || selection.name.value === "__typename")
        )
          return false;
      }
    }
  }
  visit(document, {
    Field(node) {
      const required = policy.timeDependent.get(node.name.value);
      if (required !== undefined && !node.arguments?.some((a) => a.name.value === required)) ok = false;
      if (node.name.value === "__schema" || node.name.value === "__type") ok = false;
    },
  });
  return ok;
}
