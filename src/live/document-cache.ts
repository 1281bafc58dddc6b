import { type DocumentNode, GraphQLError, type GraphQLSchema, parse, specifiedRules, validate } from "graphql";
import { AppError } from "../errors";
import { checkDocumentLength, checkFieldComparisons } from "../graphql-core/field-comparisons";
import type { GraphQLPolicy } from "../graphql-core/policy";

/** Dashboards send the same few operations over and over. */
export const MAX_CACHED_DOCUMENTS = 500;

/** A query text parsed and validated once: its document with what validation found, or why it did not parse. */
export type CheckedDocument =
  | { readonly document: DocumentNode; readonly validationErrors: readonly GraphQLError[] }
  | { readonly syntaxErrors: readonly GraphQLError[] };

export interface DocumentCache {
  /**
   * The text parsed and validated, cached by text: while cached, every socket that sends it shares
   * the same DocumentNode. A text dropped from the cache is parsed again when it comes back.
   */
  documentOf(query: string): CheckedDocument;
  /** The text a document was parsed from, while it is reachable: live operations and compiled queries are shared by text. */
  queryOf(document: DocumentNode): string | undefined;
  readonly size: number;
}

/** The `max` most recently used texts, the least recently used dropped first. */
export function createDocumentCache(options: {
  schema: GraphQLSchema;
  policy: Pick<GraphQLPolicy, "maxTokens" | "validationRules">;
  max?: number;
}): DocumentCache {
  const { schema, policy, max = MAX_CACHED_DOCUMENTS } = options;
  /** By text, in order of last use: the first is the next to go. */
  const checked = new Map<string, CheckedDocument>();
  const texts = new WeakMap<DocumentNode, string>();

  function check(query: string): CheckedDocument {
    try {
      const document = parse(query, { maxTokens: policy.maxTokens });
      const refusal = refusalBeforeValidation(query, document);
      const validationErrors = refusal
        ? [refusal]
        : validate(schema, document, [...specifiedRules, ...policy.validationRules]);
      texts.set(document, query);
      return { document, validationErrors };
    } catch (error) {
      return { syntaxErrors: [error instanceof GraphQLError ? error : new GraphQLError(String(error))] };
    }
  }

  return {
    documentOf(query) {
      let entry = checked.get(query);
      if (entry) checked.delete(query);
      else {
        entry = check(query);
        if (checked.size >= max) checked.delete(checked.keys().next().value!);
      }
      checked.set(query, entry);
      return entry;
    },
    queryOf: (document) => texts.get(document),
    get size() {
      return checked.size;
    },
  };
}

/** QUERY_TOO_COMPLEX, as a validation error, for a document validation must not see (field-comparisons.ts). */
function refusalBeforeValidation(text: string, document: DocumentNode): GraphQLError | undefined {
  try {
    checkDocumentLength(text);
    checkFieldComparisons(document);
    return undefined;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return new GraphQLError(error.message, { extensions: { code: error.code } });
  }
}
