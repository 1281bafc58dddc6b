import { type DocumentNode, Kind, OperationTypeNode, parse, visit } from "graphql";
import { Counter, type Registry } from "prom-client";
import type { ResponseCachePolicy } from "../graphql-core/response-cache-policy";

/**
 * A cache of whole GraphQL responses for operations that read only immutable, public data (station
 * data changes only on import). Keyed by the exact operation text, operation name and variables, and
 * by the data version, so an import invalidates everything at once. Only answers that had no errors
 * are kept, and a clock-dependent field only when this request pins it.
 *
 * Bounded, least recently used out: at most `maxEntries` keys (an answer to a POST is kept under two:
 * its body's text and its parsed operation) and as many remembered verdicts
 * (query text → cacheable), and `maxBytes` in all — keys and answers, plus the verdicts' query texts
 * in an eighth of it — each string counted at two bytes per character (the most a JS string takes)
 * with a fixed overhead per entry. A request whose key (operation text, name, variables) is longer
 * than `maxKeyChars` is neither looked up nor kept, so one large query cannot take the space.
 *
 * A caller without a key is held to smaller limits than a key's (operation-limits.ts): it is answered
 * only from answers given to callers without a key, never one a key's larger limits let through.
 */
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

/**
 * Whether a query's answers may be kept: never (false), or when each of `pinnedBy` (variables that
 * give a clock-dependent field its instant) has a non-null value in the request. `defaults`: the
 * variables whose declared default is a non-null literal in every operation that declares them.
 */
export type CacheVerdict = false | { readonly pinnedBy: readonly string[]; readonly defaults: ReadonlySet<string> };

/** Counted per entry besides its strings: the map slot, the entry objects, the content type. */
const ENTRY_OVERHEAD_BYTES = 256;
/** Who asks or was answered: `anonymous`, a caller without a key (or whose key did not authenticate). */
export interface CacheCaller {
  readonly anonymous?: boolean;
}

interface Entry {
  readonly response: CachedResponse;
  readonly bytes: number;
  /** Given to a caller without a key: within the anonymous limits, so any caller may be answered with it. */
  readonly anonymous: boolean;
}

/** A JS string takes at most two bytes per UTF-16 code unit. */
const stringBytes = (s: string) => 2 * s.length;

export function createResponseCache(
  policy: ResponseCachePolicy,
  version: () => number,
  { maxEntries = 2_000, maxBytes = 64 * 1024 * 1024, maxKeyChars = 16 * 1024 } = {},
) {
  let entries = new Map<string, Entry>();
  let bytes = 0;
  let cachedVersion = version();
  const verdicts = new Map<string, CacheVerdict>(); // query text → verdict, bounded below
  let verdictBytes = 0;
  const maxVerdictBytes = Math.floor(maxBytes / 8);
  const maxEntryBytes = maxBytes - maxVerdictBytes;

  /** The answer's form depends on the Accept header (application/json or graphql-response+json). */
  function keyOf(body: GraphQLRequestBody, accept: string): string | undefined {
    if (typeof body !== "object" || body === null || typeof body.query !== "string" || body.extensions !== undefined)
      return undefined;
    if (body.query.length > maxKeyChars) return undefined;
    const name = typeof body.operationName === "string" ? body.operationName : "";
    const variables = body.variables === undefined || body.variables === null ? "" : JSON.stringify(body.variables);
    const key = `${accept}\u0000${name}\u0000${variables}\u0000${body.query}`;
    return key.length > maxKeyChars ? undefined : key;
  }

  function current(): Map<string, Entry> {
    const now = version();
    if (now !== cachedVersion) {
      entries = new Map();
      bytes = 0;
      cachedVersion = now;
    }
    return entries;
  }

  function verdictOf(query: string): CacheVerdict {
    let verdict = verdicts.get(query);
    if (verdict === undefined) {
      verdict = cacheVerdict(query, policy);
      const cost = stringBytes(query) + ENTRY_OVERHEAD_BYTES;
      if (verdicts.size >= maxEntries || verdictBytes + cost > maxVerdictBytes) {
        verdicts.clear();
        verdictBytes = 0;
      }
      verdicts.set(query, verdict);
      verdictBytes += cost;
    }
    return verdict;
  }

  /** The key of a body's exact text: a request sending the same bytes is answered before parsing them. */
  function textKeyOf(text: string, accept: string): string | undefined {
    const key = `\u0001${accept}\u0000${text}`;
    return key.length > maxKeyChars ? undefined : key;
  }

  const hits = { byText: 0, byOperation: 0 };

  function lookUp(key: string, by: keyof typeof hits, { anonymous = false }: CacheCaller): CachedResponse | undefined {
    const map = current();
    const entry = map.get(key);
    const hit = entry !== undefined && (entry.anonymous || !anonymous) ? entry : undefined;
    if (hit !== undefined) {
      map.delete(key); // move to the most recently used end
      map.set(key, hit);
      hits[by]++;
    }
    return hit?.response;
  }

  function keep(key: string, response: CachedResponse, anonymous: boolean): void {
    const map = current();
    const cost = stringBytes(key) + stringBytes(response.body) + ENTRY_OVERHEAD_BYTES;
    const previous = map.get(key);
    if (previous !== undefined) {
      map.delete(key);
      bytes -= previous.bytes;
    }
    map.set(key, { response, bytes: cost, anonymous });
    bytes += cost;
    for (const [oldKey, old] of map) {
      if (map.size <= maxEntries && bytes <= maxEntryBytes) break;
      map.delete(oldKey);
      bytes -= old.bytes;
    }
  }

  return {
    /**
     * The answer stored for a POST body of exactly this text, if any: kept alongside the answer to its
     * parsed operation, so a repeated request (what frontends send) skips JSON parsing and key-making.
     */
    getByText(text: string, accept: string, caller: CacheCaller = {}): CachedResponse | undefined {
      const key = textKeyOf(text, accept);
      return key === undefined ? undefined : lookUp(key, "byText", caller);
    },

    /** The stored answer for this request, if any. */
    get(body: GraphQLRequestBody, accept: string, caller: CacheCaller = {}): CachedResponse | undefined {
      const key = keyOf(body, accept);
      return key === undefined ? undefined : lookUp(key, "byOperation", caller);
    },

    /**
     * Keeps `payload` (the serialised answer) when the operation only reads cacheable fields; with
     * `text` (the POST body as sent), under that text too. Each key counts the answer in full (two
     * keys may share one string, but either may outlive the other), so the bound holds either way.
     * `caller`: who was answered (an answer to a caller without a key is given to any caller).
     */
    store(
      body: GraphQLRequestBody,
      accept: string,
      versionAtStart: number,
      response: CachedResponse,
      text?: string,
      { anonymous = false }: CacheCaller = {},
    ): boolean {
      const key = keyOf(body, accept);
      if (key === undefined || versionAtStart !== version()) return false;
      const cost = stringBytes(key) + stringBytes(response.body) + ENTRY_OVERHEAD_BYTES;
      if (response.body.includes('"errors":') || cost > maxEntryBytes / 4) return false;
      if (!pinned(verdictOf(body.query as string), body.variables)) return false;
      keep(key, response, anonymous);
      const textKey = text === undefined ? undefined : textKeyOf(text, accept);
      if (textKey !== undefined) keep(textKey, response, anonymous);
      return true;
    },

    version,
    /** Answers given so far, by the exact body text or by the parsed operation. */
    hits: () => ({ ...hits }),
    /** Keys kept: an answer to a POST is kept under two (its text's and its operation's). */
    size: () => current().size,
    /** What the bound counts now: answers with their keys, and remembered verdicts. */
    bytes: () => {
      current();
      return bytes + verdictBytes;
    },
  };
}

export type ResponseCache = ReturnType<typeof createResponseCache>;

/** gateway_graphql_response_cache_hits_total{key="text"|"operation"} in /metrics. */
export function registerResponseCacheMetrics(registry: Registry, cache: ResponseCache): void {
  new Counter({
    name: "gateway_graphql_response_cache_hits_total",
    help: "GraphQL answers given from the response cache, by the key that found them (the body's text, or its parsed operation)",
    labelNames: ["key"],
    registers: [registry],
    collect() {
      const { byText, byOperation } = cache.hits();
      this.reset();
      this.inc({ key: "text" }, byText);
      this.inc({ key: "operation" }, byOperation);
    },
  });
}

/** Whether a request with these variables satisfies the verdict: every pinning variable is non-null. */
function pinned(verdict: CacheVerdict, variables: unknown): boolean {
  if (verdict === false) return false;
  if (verdict.pinnedBy.length === 0) return true;
  const values = typeof variables === "object" && variables !== null ? (variables as Record<string, unknown>) : {};
  return verdict.pinnedBy.every((name) =>
    Object.hasOwn(values, name) ? values[name] !== null && values[name] !== undefined : verdict.defaults.has(name),
  );
}

/**
 * Whether the answers to `query` may be kept when it is sent with `variables`: a query operation that
 * selects only policy root fields, and whose clock-dependent fields all have their pinning argument
 * set to a non-null value (a literal, or a variable that is non-null in this request).
 */
export function isCacheable(query: string, policy: ResponseCachePolicy, variables?: unknown): boolean {
  return pinned(cacheVerdict(query, policy), variables);
}

/** The verdict on a query text, independent of the request's variables (see `CacheVerdict`). */
export function cacheVerdict(query: string, policy: ResponseCachePolicy): CacheVerdict {
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true });
  } catch {
    return false;
  }
  // A variable's default pins only when every operation declaring it gives a non-null literal.
  const defaults = new Map<string, boolean>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) {
      if (definition.operation !== OperationTypeNode.QUERY) return false;
      for (const selection of definition.selectionSet.selections) {
        // Fragments at the root would hide which root fields are read: not worth supporting.
        if (
          selection.kind !== Kind.FIELD ||
          !(policy.rootFields.has(selection.name.value) || selection.name.value === "__typename")
        )
          return false;
      }
      for (const variable of definition.variableDefinitions ?? []) {
        const name = variable.variable.name.value;
        const value = variable.defaultValue;
        const pins = value !== undefined && value.kind !== Kind.NULL;
        defaults.set(name, (defaults.get(name) ?? true) && pins);
      }
    }
  }
  let ok = true;
  const pinnedBy = new Set<string>();
  visit(document, {
    Field(node) {
      if (node.name.value === "__schema" || node.name.value === "__type") ok = false;
      const required = policy.timeDependent.get(node.name.value);
      if (required === undefined) return;
      const value = node.arguments?.find((a) => a.name.value === required)?.value;
      if (value === undefined || value.kind === Kind.NULL) ok = false;
      else if (value.kind === Kind.VARIABLE) pinnedBy.add(value.name.value);
    },
  });
  if (!ok) return false;
  return {
    pinnedBy: [...pinnedBy],
    defaults: new Set([...defaults].filter(([, pins]) => pins).map(([name]) => name)),
  };
}
