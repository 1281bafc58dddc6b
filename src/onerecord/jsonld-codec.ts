import { createRequire } from "node:module";
import { setImmediate } from "node:timers/promises";
import jsonld from "jsonld";
import { AppError } from "../errors";
import { checkExpandedBody, checkJsonLdBounds } from "./jsonld-bounds";
import { compactTree } from "./jsonld-compact";
import { ONE_RECORD_CONTEXT } from "./jsonld-context";
import type { NodeObject } from "./jsonld-tree";
import { canonicalLiterals } from "./xsd-canonical";

/**
 * Reading JSON-LD bodies in any of the three forms the specification requires (expanded, compacted,
 * flattened) into one expanded tree, and writing expanded trees back compacted with the inline
 * context. The `jsonld` library does the JSON-LD algorithms; it never fetches anything: a remote
 * context is refused.
 */

/**
 * jsonld.js's flattening step alone, for a body already expanded (its public flatten() expands its
 * input again first). An internal module of the version package.json pins; test/onerecord/
 * jsonld-worst-case.test.ts checks that reading gives what jsonld.flatten() gives.
 */
const { flatten: flattenExpanded } = createRequire(__filename)("jsonld/lib/flatten") as {
  flatten: (expanded: unknown) => NodeObject[];
};

/**
 * The one object a body describes, as an expanded tree: its root node, with every node it alone refers
 * to embedded under it (a flattened body's @graph is rebuilt into that tree). Blank nodes keep their
 * labels ("_:b0"), unlabelled nested nodes get one. Refuses a body that is not JSON-LD, uses a remote
 * context, or describes no single root (several top-level objects, or none), and one over what a body
 * may cost (jsonld-bounds.ts: before any JSON-LD processing, and before flattening).
 */
export async function readJsonLdObject(body: unknown): Promise<NodeObject> {
  return rootTreeOf(await readJsonLdNodes(body));
}

/**
 * Every node a body describes, flattened: each node once, with its blank nodes labelled and its links
 * as references ({"@id"}). For a body that may describe several objects (another server's list of
 * subscriptions); refused as readJsonLdObject refuses, but for the number of roots.
 */
export async function readJsonLdNodes(body: unknown): Promise<NodeObject[]> {
  if (body === null || typeof body !== "object")
    throw new AppError("INVALID_JSON_LD", "The body must be a JSON-LD object (or an array of node objects)");
  checkJsonLdBounds(body);
  let expanded: unknown;
  try {
    expanded = await jsonld.expand(body, expandOptions(body));
  } catch (error) {
    throw unreadable(error);
  }
  checkExpandedBody(expanded);
  // A turn of the event loop after each costly step (then the route's own work): what arrived
  // meanwhile waits for one step, not for the whole request.
  await setImmediate();
  let nodes: NodeObject[];
  try {
    nodes = flattenExpanded(expanded);
  } catch (error) {
    throw unreadable(error);
  }
  await setImmediate();
  return nodes;
}

function unreadable(error: unknown): AppError {
  return new AppError("INVALID_JSON_LD", `The body is not JSON-LD this server can read: ${jsonLdReason(error)}`, {
    cause: error,
  });
}

/**
 * An expanded tree compacted with the inline context, its typed literals canonical (xsd-canonical.ts):
 * the form every answer has. The trees the server builds take the fast path (jsonld-compact.ts);
 * jsonld.js compacts any other.
 */
export async function compactJsonLd(tree: NodeObject): Promise<Record<string, unknown>> {
  const node = canonicalLiterals(tree);
  const fast = compactTree(node);
  if (fast !== undefined) return { "@context": ONE_RECORD_CONTEXT, ...fast };
  const compacted = (await jsonld.compact(node, ONE_RECORD_CONTEXT as jsonld.ContextDefinition, {
    documentLoader: refuseRemoteDocuments,
  })) as Record<string, unknown>;
  // compact() writes the context first; keep it so, with the inline context object itself.
  return { ...compacted, "@context": ONE_RECORD_CONTEXT };
}

const REMOTE_CONTEXT = "REMOTE_CONTEXT";

/**
 * Safe mode: what JSON-LD would drop silently (a term that expands to no IRI) is an error. A body
 * without a context is read with the inline one ("cargo:Piece" means what it means in our answers).
 */
function expandOptions(body: object): jsonld.Options.Expand {
  const hasContext = !Array.isArray(body) && "@context" in body;
  return {
    safe: true,
    ...(hasContext ? {} : { expandContext: ONE_RECORD_CONTEXT }),
    documentLoader: refuseRemoteDocuments,
  } as jsonld.Options.Expand;
}

function refuseRemoteDocuments(url: string): Promise<never> {
  return Promise.reject(Object.assign(new Error(`remote context ${url} refused`), { code: REMOTE_CONTEXT, url }));
}

/** What went wrong, in words a client can act on: the remote context named, else jsonld's message. */
function jsonLdReason(error: unknown): string {
  for (let cause: unknown = error, depth = 0; cause && depth < 6; depth++) {
    const { code, url } = cause as { code?: unknown; url?: unknown };
    if (code === REMOTE_CONTEXT)
      return `it names the remote context ${String(url)}; this server fetches no context: give it inline (or send expanded JSON-LD)`;
    cause = (cause as { details?: { cause?: unknown }; cause?: unknown }).details?.cause ?? (cause as Error).cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { details?: { code?: unknown } }).details?.code;
  return typeof code === "string" ? `${code}: ${message}` : message;
}

/**
 * The one root of a flattened node list, with the nodes only it reaches embedded. A node referred to
 * twice, or on the path to itself, stays a reference.
 */
function rootTreeOf(nodes: NodeObject[]): NodeObject {
  const byId = new Map(nodes.map((node) => [node["@id"] as string, node]));
  const references = new Map<string, number>();
  for (const node of nodes)
    for (const value of propertyValues(node)) {
      const id = referenceOf(value);
      if (id !== undefined && byId.has(id)) references.set(id, (references.get(id) ?? 0) + 1);
    }
  const roots = nodes.filter((node) => !references.has(node["@id"] as string));
  if (roots.length !== 1)
    throw new AppError(
      "INVALID_LOGISTICS_OBJECT",
      roots.length === 0
        ? "The body describes no root object: every node is referred to by another"
        : `The body describes ${roots.length} top-level objects; send one (a @graph is read only as the flattened form of one object)`,
    );
  const embed = (node: NodeObject, path: ReadonlySet<string>): NodeObject => {
    const out: NodeObject = {};
    for (const [key, value] of Object.entries(node)) {
      if (key.startsWith("@")) {
        out[key] = value;
        continue;
      }
      out[key] = (value as unknown[]).map((item) => {
        const id = referenceOf(item);
        const target = id === undefined ? undefined : byId.get(id);
        if (!target || path.has(id!) || references.get(id!) !== 1) return item;
        return embed(target, new Set([...path, id!]));
      });
    }
    return out;
  };
  const root = roots[0]!;
  return embed(root, new Set([root["@id"] as string]));
}

function propertyValues(node: NodeObject): unknown[] {
  return Object.entries(node).flatMap(([key, value]) => (key.startsWith("@") ? [] : (value as unknown[])));
}

/** The @id of a bare reference ({"@id": …} and nothing else). */
function referenceOf(value: unknown): string | undefined {
  if (value === null || typeof value !== "object") return undefined;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === "@id" ? (value as { "@id": string })["@id"] : undefined;
}
