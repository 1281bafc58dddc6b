/**
 * graphql-js's OverlappingFieldsCanBeMerged rule compares every pair of fields sharing a response
 * name: a document that repeats one field 490 times (within GRAPHQL_MAX_TOKENS) cost 100–300 ms of
 * validation each. Such a document is refused before validation, from its pair count.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, parse, specifiedRules, validate } from "graphql";
import { AppError } from "../src/errors";
import { checkFieldComparisons, MAX_FIELD_COMPARISONS } from "../src/graphql/field-comparisons";
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { openSubscriber } from "./support/ws-protocol";
import { until } from "./support/webhooks";

const repeated = (times: number) => `{ ${"health { status } ".repeat(times)}}`;
const refusalOf = (document: string): AppError | undefined => {
  try {
    checkFieldComparisons(parse(document));
    return undefined;
  } catch (error) {
    return error as AppError;
  }
};

describe("the field-comparison bound on its own", () => {
  it("counts the pairs of fields under one name, fragments and inline fragments merged in", () => {
    expect(refusalOf(repeated(20))).toBeUndefined();
    expect(refusalOf(repeated(490))).toMatchObject({ code: "QUERY_TOO_COMPLEX" });
    // 150 repeats: 11,175 pairs, past the 2,500 — whether written out or gathered from fragments.
    expect(MAX_FIELD_COMPARISONS).toBe(2_500);
    const spreads = Array.from({ length: 150 }, (_, i) => `...F${i}`).join(" ");
    const fragments = Array.from({ length: 150 }, (_, i) => `fragment F${i} on Query { health { status } }`);
    expect(refusalOf(`{ ${spreads} } ${fragments.join(" ")}`)).toMatchObject({ code: "QUERY_TOO_COMPLEX" });
    expect(refusalOf(`{ ${"... on Query { health { status } } ".repeat(150)}}`)).toMatchObject({
      code: "QUERY_TOO_COMPLEX",
    });
    // Sub-selections of fields merged under one name are compared merged.
    expect(refusalOf(`{ ${"health { status status status status status } ".repeat(30)}}`)).toMatchObject({
      code: "QUERY_TOO_COMPLEX",
    });
    expect(refusalOf(`{ a: stationCodes b: stationCodes station(code: "FRA") { code name } }`)).toBeUndefined();
  });

  it("ends on fragment cycles and on fragments doubling at every level", () => {
    expect(refusalOf("{ ...A } fragment A on Query { health { status } ...B } fragment B on Query { ...A }")).toBe(
      undefined,
    );
    const doubling = Array.from(
      { length: 24 },
      (_, i) => `fragment F${i} on Query { __typename ...F${i + 1} ...F${i + 1} }`,
    );
    // Each fragment once per merged set: 25 fragments merge 25 `__typename`s, counted at every level.
    expect(refusalOf(`{ ...F0 } ${doubling.join(" ")} fragment F24 on Query { __typename }`)).toMatchObject({
      code: "QUERY_TOO_COMPLEX",
    });
    expect(refusalOf(`{ ...F14 } ${doubling.slice(14).join(" ")} fragment F24 on Query { __typename }`)).toBe(
      undefined,
    );
  });

  it("lets through only documents whose validation compares at most the bound (measured, printed)", () => {
    const schema = buildSchema(readFileSync(path.resolve(__dirname, "..", "schema.graphql"), "utf8"));
    // 50 repeats: 1,225 pairs of `health` and 1,225 of their `status`, merged — the most it admits.
    const largest = parse(repeated(50));
    expect(refusalOf(repeated(50))).toBeUndefined();
    expect(refusalOf(repeated(51))).toMatchObject({ code: "QUERY_TOO_COMPLEX" });
    validate(schema, largest, specifiedRules); // warm up
    const before = process.cpuUsage();
    expect(validate(schema, largest, specifiedRules)).toEqual([]);
    const used = process.cpuUsage(before);
    console.log(
      `validation of the largest document the bound admits: ${((used.user + used.system) / 1000).toFixed(1)} ms CPU`,
    );
  });
});

describe("the bound on the running gateway", () => {
  const disposers = new Disposers();
  let url: string;
  beforeAll(async () => {
    ({ url } = await startApp("pglite", disposers));
  });
  afterAll(() => disposers.disposeAll());

  it("refuses the 490-repeat document before validation, without a key, over HTTP and over websockets", async () => {
    const answer = await postJson(`${url}/graphql`, { query: repeated(490) });
    expect(answer).toMatchObject({
      status: 400,
      body: {
        errors: [{ extensions: { code: "QUERY_TOO_COMPLEX" }, message: expect.stringContaining("pairs of fields") }],
      },
    });
    // A batch is checked operation by operation.
    const batch = await postJson(`${url}/graphql`, [{ query: "{ stationCodes }" }, { query: repeated(300) }]);
    expect(batch.status).toBe(400);

    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("repeats", repeated(490), {});
    await until(() => subscriber.errors.length > 0, { what: "the refusal" });
    expect(subscriber.errors).toMatchObject([[{ extensions: { code: "QUERY_TOO_COMPLEX" } }]]);
  });
});
