import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { AppError } from "../errors";

/**
 * Allow-listed (persisted) operations: when configured, only these documents run. The file is an
 * Apollo persisted-query manifest ({ format: "apollo-persisted-query-manifest", operations: [{ id,
 * body }] }, as Apollo's tooling generates) or a plain JSON array of documents. A client sends the
 * whole document, or only its id as `extensions.persistedQuery.sha256Hash` (Apollo's persisted
 * query protocol); an id is the document's SHA-256 in hex.
 */
export interface OperationAllowList {
  readonly size: number;
  /** The document to run for a request body (HTTP) or subscribe payload (websocket), or a 403/400 AppError. */
  resolve(request: { query?: unknown; extensions?: unknown }): string;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function loadOperationAllowList(file: string): OperationAllowList {
  const parsed: unknown = JSON.parse(readFileSync(file, "utf8"));
  const bodies: string[] = Array.isArray(parsed)
    ? parsed.filter((b): b is string => typeof b === "string")
    : ((parsed as { operations?: Array<{ body?: unknown }> }).operations ?? [])
        .map((o) => o.body)
        .filter((b): b is string => typeof b === "string");
  if (bodies.length === 0)
    throw new Error(
      `${file} lists no operations (expected an Apollo persisted-query manifest or an array of documents)`,
    );
  return createOperationAllowList(bodies);
}

export function createOperationAllowList(documents: readonly string[]): OperationAllowList {
  const byHash = new Map(documents.map((body) => [sha256Hex(body), body]));
  return {
    size: byHash.size,
    resolve({ query, extensions }) {
      const persisted = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery;
      const hash =
        typeof query === "string"
          ? sha256Hex(query)
          : typeof persisted?.sha256Hash === "string"
            ? persisted.sha256Hash.toLowerCase()
            : undefined;
      if (hash === undefined)
        throw new AppError(
          "VALIDATION_FAILED",
          "Send a query, or the id of an allowed operation as extensions.persistedQuery.sha256Hash",
        );
      const body = byHash.get(hash);
      if (body === undefined)
        throw new AppError(
          "OPERATION_NOT_ALLOWED",
          `This server runs only allow-listed operations; ${typeof query === "string" ? "this document is" : `id ${hash.slice(0, 16)}… is`} not one of them`,
        );
      return body;
    },
  };
}
