import { buildSchema } from "graphql";
import { createOperationAllowList } from "../src/graphql-core/allow-list";
import type { GraphQLPolicy } from "../src/graphql-core/policy";
import { createDocumentCache } from "../src/live/document-cache";
import { admitOperation } from "../src/live/operation-admission";

const schema = buildSchema(`type Query { node: Node } type Node { name: String }`);
const limits: GraphQLPolicy["limits"] = { maxCost: 300_000, maxAliases: 2, maxListArgument: 1_000 };

function rulesWith(allowList?: readonly string[]) {
  const policy = {
    maxTokens: 1_000,
    validationRules: [],
    limits,
    allowList: allowList && createOperationAllowList(allowList),
  };
  return { schema, policy, documents: createDocumentCache({ schema, policy }) };
}

const codesOf = (admitted: ReturnType<typeof admitOperation>) =>
  "errors" in admitted ? admitted.errors.map((e) => e.extensions.code ?? e.message) : [];

describe("admitting a websocket operation", () => {
  it("admits a valid operation with the cached document of its text", () => {
    const rules = rulesWith();
    const admitted = admitOperation({ query: "{ node { name } }" }, rules);
    const cached = rules.documents.documentOf("{ node { name } }");
    expect("document" in admitted && "document" in cached && admitted.document === cached.document).toBe(true);
  });

  it("refuses a text outside the allow-list before parsing it", () => {
    const rules = rulesWith(["{ node { name } }"]);
    expect("document" in admitOperation({ query: "{ node { name } }" }, rules)).toBe(true);
    expect(codesOf(admitOperation({ query: "{ node {" }, rules))).toEqual(["OPERATION_NOT_ALLOWED"]);
    expect(rules.documents.size).toBe(1);
  });

  it("answers a text that does not parse with its syntax error", () => {
    const admitted = admitOperation({ query: "{ node {" }, rulesWith());
    expect("errors" in admitted && admitted.errors[0]!.message).toMatch(/^Syntax Error/);
  });

  it("refuses an operation over the limits for that, before what validation found", () => {
    const overLimitAndInvalid = "{ a: node { name } b: node { name } c: node { zzz } }";
    expect(codesOf(admitOperation({ query: overLimitAndInvalid }, rulesWith()))).toEqual(["QUERY_TOO_COMPLEX"]);
    expect(codesOf(admitOperation({ query: "{ a: node { zzz } }" }, rulesWith()))).toEqual([
      'Cannot query field "zzz" on type "Node".',
    ]);
  });
});
