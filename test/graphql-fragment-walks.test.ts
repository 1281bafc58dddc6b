/**
 * The walks over an operation (the depth rule, the cost check, the compiled
 * executor's field count) visit each fragment once, however often it is spread, and stop at a hard
 * budget of selections. The work is counted, not timed: every read of a fragment definition's
 * selections is counted, which is what a walk does each time it enters a fragment. A walk that
 * re-enters a fragment at every spread reads it 2^n times for n fragments that each spread the next
 * twice; one that measures each fragment once reads it a constant number of times.
 */
import { buildSchema, type DocumentNode, execute, Kind, parse, specifiedRules, validate } from "graphql";
import { compiledExecutorFor, MAX_COMPILED_FIELDS } from "../src/graphql-core/compiled-executor";
import { depthLimit } from "../src/graphql-core/depth-limit";
import { checkOperationLimits, DEFAULT_OPERATION_LIMITS } from "../src/graphql-core/operation-limits";
import { MAX_WALKED_SELECTIONS } from "../src/graphql-core/walk-budget";

/** GRAPHQL_MAX_DEPTH's default. */
const MAX_DEPTH = 12;

const schema = buildSchema(`
  type Query { node: Node stations(codes: [String!]): [Station!]! }
  type Node { child: Node name: String }
  type Station { code: String! }
`);

/**
 * Parses `text` and counts reads of the selections of each fragment definition (graphql-js's own
 * `visit` reads them once per pass; a walk reads them each time it measures the fragment).
 */
function instrumented(text: string): { document: DocumentNode; reads: () => number } {
  const document = parse(text);
  let reads = 0;
  for (const definition of document.definitions) {
    if (definition.kind !== Kind.FRAGMENT_DEFINITION) continue;
    const selections = definition.selectionSet.selections;
    Object.defineProperty(definition.selectionSet, "selections", {
      enumerable: true,
      get: () => {
        reads++;
        return selections;
      },
    });
  }
  return { document, reads: () => reads };
}

/** n fragments on Query, each selecting `selection` and spreading the next one twice (the doubling document). */
function doubling(n: number, selection = "__typename", root = "{ ...F1 }"): string {
  let text = root;
  for (let i = 1; i < n; i++) text += ` fragment F${i} on Query { ${selection} ...F${i + 1} ...F${i + 1} }`;
  return `${text} fragment F${n} on Query { ${selection} }`;
}

/** 2^n − 1: how many times the selection of `doubling(n)` is selected, fragments expanded. */
const expanded = (n: number) => 2 ** n - 1;

// 20 first: a walk that re-enters fragments reads about a million times there and fails the bound
// within seconds, before the sizes that would take it hours.
const SIZES = [20, 24, 30, 40];
/** Reads allowed per fragment: graphql-js's own pass, and one measuring per mode of the walk. */
const READS_PER_FRAGMENT = 4;

describe("the depth rule measures each fragment once", () => {
  it("passes the doubling document (20, 24, 30, 40 fragments), reading each fragment a bounded number of times", () => {
    for (const n of SIZES) {
      const { document, reads } = instrumented(doubling(n));
      expect(validate(schema, document, [depthLimit(MAX_DEPTH)])).toEqual([]); // one level deep
      expect(reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);
    }
  });

  it("measures the depth of a chain of doubled fragments exactly", () => {
    for (const n of SIZES) {
      // F_i selects `name` and spreads F_(i+1) twice one level down: F_1 is n levels deep.
      let text = "{ node { ...N1 } }";
      for (let i = 1; i < n; i++) text += ` fragment N${i} on Node { name child { ...N${i + 1} ...N${i + 1} } }`;
      text += ` fragment N${n} on Node { name }`;
      const { document, reads } = instrumented(text);
      expect(validate(schema, document, [depthLimit(MAX_DEPTH)]).map((e) => e.message)).toEqual([
        `The operation is nested ${n + 1} levels deep; at most 12 are allowed`,
      ]);
      expect(reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);
    }
  });

  it("counts introspection fields and selections in doubled fragments as if expanded", () => {
    for (const n of SIZES) {
      const fields = instrumented(doubling(n, "__schema { queryType { name } }"));
      expect(validate(schema, fields.document, [depthLimit(MAX_DEPTH)]).map((e) => e.message)).toEqual([
        `The operation selects __schema or __type ${expanded(n)} times; at most 5 are allowed`,
      ]);
      expect(fields.reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);

      let text = "{ __schema { ...T1 } }";
      for (let i = 1; i < n; i++)
        text += ` fragment T${i} on __Schema { queryType { name } ...T${i + 1} ...T${i + 1} }`;
      text += ` fragment T${n} on __Schema { queryType { name } }`;
      const selections = instrumented(text);
      expect(validate(schema, selections.document, [depthLimit(MAX_DEPTH)]).map((e) => e.message)).toEqual([
        "The introspection selects more than 1000 fields (fragments counted where they are spread)",
      ]);
      expect(selections.reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);
    }
  });

  it("cuts fragment cycles (graphql-js reports them) instead of following them", () => {
    const document = parse(
      "{ ...A node { ...B } } fragment A on Query { __typename ...A2 } fragment A2 on Query { ...A } fragment B on Node { child { ...B } }",
    );
    const errors = validate(schema, document, [...specifiedRules, depthLimit(MAX_DEPTH)]).map((e) => e.message);
    expect(errors).toEqual([
      'Cannot spread fragment "A" within itself via "A2".',
      'Cannot spread fragment "B" within itself.',
    ]);
  });

  it("refuses a document with more selections than its walk may visit", () => {
    const document = parse(`{ ${"__typename ".repeat(MAX_WALKED_SELECTIONS + 1)} }`);
    const errors = validate(schema, document, [depthLimit(MAX_DEPTH)]);
    expect(errors.map((e) => [e.message, e.extensions.code])).toEqual([
      [
        `The operation has more than ${MAX_WALKED_SELECTIONS} selections to measure (each fragment counted once)`,
        "QUERY_TOO_COMPLEX",
      ],
    ]);
    expect(
      validate(schema, parse(`{ ${"__typename ".repeat(MAX_WALKED_SELECTIONS)} }`), [depthLimit(MAX_DEPTH)]),
    ).toEqual([]);
  });
});

describe("the cost check measures each fragment once", () => {
  it("refuses the doubling document (20, 24, 30, 40 fragments) by its exact cost, reading each fragment a bounded number of times", () => {
    for (const n of SIZES) {
      const { document, reads } = instrumented(doubling(n));
      expect(checkOperationLimits(schema, document, undefined, {})?.message).toBe(
        `The operation would cost ${expanded(n)} (fields, with lists counted by their size); at most 300000 is allowed`,
      );
      expect(reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);
    }
  });

  it("counts the aliases of doubled fragments as if expanded", () => {
    for (const n of SIZES) {
      const { document, reads } = instrumented(doubling(n, "a: __typename"));
      expect(checkOperationLimits(schema, document, undefined, {})?.message).toBe(
        `The operation uses ${expanded(n)} aliases; at most 30 are allowed`,
      );
      expect(reads()).toBeLessThanOrEqual(READS_PER_FRAGMENT * n);
    }
  });

  it("costs a fragment by where it is spread: at the root a list is every item, inside an object ten", () => {
    const document = parse(
      "{ ...S node { child { ...S2 } } } fragment S on Query { stations { code } } fragment S2 on Node { name }",
    );
    // 1 + 500 × 1 at the root; node 1 + child (1 + name 1).
    expect(
      checkOperationLimits(schema, document, undefined, {}, { ...DEFAULT_OPERATION_LIMITS, maxCost: 1 })?.message,
    ).toBe("The operation would cost 504 (fields, with lists counted by their size); at most 1 is allowed");
  });

  it("cuts fragment cycles instead of following them (the check may run before validation, over websockets)", () => {
    const document = parse("{ ...A } fragment A on Query { __typename ...B } fragment B on Query { __typename ...A }");
    expect(checkOperationLimits(schema, document, undefined, {})).toBeUndefined();
  });

  it("refuses a document with more selections than its walk may visit", () => {
    const document = parse(`{ ${"__typename ".repeat(MAX_WALKED_SELECTIONS + 1)} }`);
    const error = checkOperationLimits(schema, document, undefined, {}, { ...DEFAULT_OPERATION_LIMITS, maxCost: 1e9 });
    expect([error?.code, error?.message]).toEqual([
      "QUERY_TOO_COMPLEX",
      `The operation has more than ${MAX_WALKED_SELECTIONS} selections to measure (each fragment counted once)`,
    ]);
  });
});

describe("the compiled executor counts fields once per fragment", () => {
  it("decides whether to compile a query from a chain of fragments without walking the chain at every spread", async () => {
    // 2^11 − 1 spreads of the head of a chain of 100 fragments: 2,047 fields, each 100 spreads down.
    const chain = 100;
    let text = doubling(11, "...C1", "{ ...F1 }");
    for (let j = 1; j < chain; j++) text += ` fragment C${j} on Query { ...C${j + 1} }`;
    text += ` fragment C${chain} on Query { __typename }`;
    const { document, reads } = instrumented(text);
    expect(validate(schema, document)).toEqual([]);
    const executor = compiledExecutorFor(schema);
    const reference = await execute({ schema, document });
    // Seen once: graphql-js runs it. The second time its fields are counted, found over the bound,
    // and graphql-js runs it again: what is counted here.
    expect(await executor.execute({ schema, document }, text)).toEqual(reference);
    const before = reads();
    expect(await executor.execute({ schema, document }, text)).toEqual(reference);
    expect(expanded(11)).toBeGreaterThan(MAX_COMPILED_FIELDS);
    expect(executor.stats()).toMatchObject({ size: 1, compilations: 0 });
    // The count, and graphql-js's execution (which collects each fragment once per selection set).
    expect(reads() - before).toBeLessThanOrEqual(READS_PER_FRAGMENT * (11 + chain));
  });
});
