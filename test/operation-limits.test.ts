import { buildSchema, parse } from "graphql";
import { checkOperationLimits, DEFAULT_OPERATION_LIMITS } from "../src/graphql-core/operation-limits";

const schema = buildSchema(`
  type Station { code: String! hours: [Int!]! }
  type Query { stations(codes: [String!], first: Int): [Station!]! station(code: String!): Station }
`);

describe("operation limits, checked once per document and variable shape", () => {
  const limits = { ...DEFAULT_OPERATION_LIMITS, maxListArgument: 3, maxCost: 40 };
  const document = parse("query Q($codes: [String!], $first: Int) { stations(codes: $codes, first: $first) { code } }");
  const check = (variables: Record<string, unknown>, withLimits = limits) =>
    checkOperationLimits(schema, document, "Q", variables, withLimits)?.message;

  it("answers by each list variable's length, the same document asked again and again", () => {
    expect(check({ codes: ["FRA", "JFK"] })).toBeUndefined();
    expect(check({ codes: ["FRA", "JFK", "SIN", "HKG"] })).toMatch(/has 4 items; at most 3/);
    expect(check({ codes: ["AAA", "BBB"] })).toBeUndefined();
    expect(check({ codes: ["FRA", "JFK", "SIN", "HKG"] })).toMatch(/has 4 items/);
  });

  it("answers by each number variable's value, and by the limits asked with", () => {
    expect(check({ first: 10 })).toBeUndefined(); // 1 + 10 × 1
    expect(check({ first: 50 })).toMatch(/would cost 51/);
    expect(check({ first: 10 })).toBeUndefined();
    expect(check({ first: 50 }, { ...limits, maxCost: 100 })).toBeUndefined();
    expect(check({ first: 50 })).toMatch(/would cost 51/);
  });

  it("answers each operation of a document by its own selections", () => {
    const two = parse(`query Small { station(code: "FRA") { code } } query Big { stations { code hours } }`);
    expect(checkOperationLimits(schema, two, "Small", {}, limits)).toBeUndefined();
    expect(checkOperationLimits(schema, two, "Big", {}, limits)?.message).toMatch(/would cost/);
    expect(checkOperationLimits(schema, two, "Small", {}, limits)).toBeUndefined();
  });

  it("cannot be led to a kept verdict by variables the operation does not declare", () => {
    // A key that spells another request's variables ("codes[4];first=1;" in the shape) must not
    // share that request's kept verdict.
    expect(check({ "codes[4];first": 1 })).toMatch(/would cost 501/); // no codes: the unbounded list
    expect(check({ codes: ["FRA", "JFK", "SIN", "HKG"], first: 1 })).toMatch(/has 4 items/);
    expect(check({ ["__proto__"]: [1, 2, 3, 4], first: 1 })).toBeUndefined();
  });

  it("keys by the operation it runs, not by the name the request gave", () => {
    const one = parse("query Only($first: Int) { stations(first: $first) { code } }");
    expect(checkOperationLimits(schema, one, undefined, { first: 50 }, limits)?.message).toMatch(/would cost 51/);
    expect(checkOperationLimits(schema, one, "Only", { first: 50 }, limits)?.message).toMatch(/would cost 51/);
    expect(checkOperationLimits(schema, one, "Missing", { first: 50 }, limits)).toBeUndefined();
  });
});
