import { buildSchema, GraphQLError } from "graphql";
import { depthLimit } from "../src/graphql-core/depth-limit";
import { MAX_DOCUMENT_CHARS } from "../src/graphql-core/field-comparisons";
import { type CheckedDocument, createDocumentCache } from "../src/live/document-cache";

const schema = buildSchema(`type Query { node: Node } type Node { child: Node name: String }`);
const policy = { maxTokens: 200, validationRules: [depthLimit(3)] };

function documentIn(checked: CheckedDocument) {
  if (!("document" in checked)) throw new Error(`expected a document, got ${JSON.stringify(checked)}`);
  return checked;
}

describe("the websocket document cache", () => {
  it("parses and validates a text once and hands every later caller the same document, with the text it came from", () => {
    const cache = createDocumentCache({ schema, policy });
    const first = documentIn(cache.documentOf("{ node { name } }"));
    expect(first.validationErrors).toEqual([]);
    expect(cache.documentOf("{ node { name } }")).toBe(first);
    expect(cache.queryOf(first.document)).toBe("{ node { name } }");
    expect(cache.size).toBe(1);
  });

  it("keeps what is wrong with a text: syntax errors, graphql-js's and the policy's validation errors", () => {
    const cache = createDocumentCache({ schema, policy });
    const broken = cache.documentOf("{ node { ");
    expect("syntaxErrors" in broken && broken.syntaxErrors[0]).toBeInstanceOf(GraphQLError);
    expect(cache.documentOf("{ node { ")).toBe(broken);

    const tooManyTokens = cache.documentOf(`{ ${"node { ".repeat(150)}name${" }".repeat(150)} }`);
    expect("syntaxErrors" in tooManyTokens && tooManyTokens.syntaxErrors[0]!.message).toMatch(/more that 200 tokens/);

    const unknownField = documentIn(cache.documentOf("{ zzz }"));
    expect(unknownField.validationErrors.map((e) => e.message)).toEqual(['Cannot query field "zzz" on type "Query".']);

    const deep = documentIn(cache.documentOf("{ node { child { child { name } } } }"));
    expect(deep.validationErrors.map((e) => e.message)).toEqual([
      "The operation is nested 4 levels deep; at most 3 are allowed",
    ]);
  });

  it("refuses a text longer than the document limit as QUERY_TOO_COMPLEX before validation sees it", () => {
    const cache = createDocumentCache({ schema, policy });
    const long = documentIn(cache.documentOf(`{ nope }${" ".repeat(MAX_DOCUMENT_CHARS)}`));
    expect(long.validationErrors).toHaveLength(1);
    expect(long.validationErrors[0]!.extensions).toEqual({ code: "QUERY_TOO_COMPLEX" });
  });

  it("drops the least recently used text first and parses a dropped text again when it comes back", () => {
    const cache = createDocumentCache({ schema, policy, max: 2 });
    const a = cache.documentOf("{ a: node { name } }");
    const b = cache.documentOf("{ b: node { name } }");
    expect(cache.documentOf("{ a: node { name } }")).toBe(a); // a is now the most recently used
    cache.documentOf("{ c: node { name } }");
    expect(cache.size).toBe(2);
    expect(cache.documentOf("{ a: node { name } }")).toBe(a);
    const bAgain = documentIn(cache.documentOf("{ b: node { name } }"));
    expect(bAgain).not.toBe(b);
    expect(cache.queryOf(bAgain.document)).toBe("{ b: node { name } }");
    expect(cache.size).toBe(2);
  });
});
