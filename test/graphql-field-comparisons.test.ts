/**
 * graphql-js's OverlappingFieldsCanBeMerged rule compares every pair of fields sharing a response
 * name: a document that repeats one field 490 times (within GRAPHQL_MAX_TOKENS) cost 100–300 ms of
 * validation each. Such a document is refused before validation, from its pair count.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { buildSchema, parse, specifiedRules, validate } from "graphql";
import { AppError } from "../src/errors";
import {
  checkFieldComparisons,
  MAX_DOCUMENT_CHARS,
  MAX_FIELD_COMPARISONS,
} from "../src/graphql-core/field-comparisons";
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
    // Sub-selections of fields merged under one name are compared merged: 35 `station`s (595 pairs)
    // holding 70 `openAt`s between them (2,415 more) are past the bound, with 35 `openAt`s not.
    const stations = (openAts: string) => `{ ${`station(code: "FRA") { ${openAts} } `.repeat(35)}}`;
    expect(refusalOf(stations("openAt(side: EXPORT) openAt(side: EXPORT)"))).toMatchObject({
      code: "QUERY_TOO_COMPLEX",
    });
    expect(refusalOf(stations("openAt(side: EXPORT)"))).toBeUndefined();
    // Plain leaves (no arguments, directives or selections) are settled at once by graphql-js and not
    // counted: colocated fragments each selecting `__typename code name` pass, however many.
    const colocated = Array.from({ length: 60 }, (_, i) => `fragment S${i} on Station { __typename code name }`);
    const spreadAll = Array.from({ length: 60 }, (_, i) => `...S${i}`).join(" ");
    expect(refusalOf(`{ station(code: "FRA") { ${spreadAll} } } ${colocated.join(" ")}`)).toBeUndefined();
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
    // Each fragment once per merged set (the depth and cost rules refuse this one).
    expect(refusalOf(`{ ...F0 } ${doubling.join(" ")} fragment F24 on Query { __typename }`)).toBeUndefined();
  });

  it("lets through only documents whose validation compares at most the bound (measured, printed)", () => {
    const schema = buildSchema(readFileSync(path.resolve(__dirname, "..", "schema.graphql"), "utf8"));
    // 71 repeats: 2,485 pairs of `health` (their `status`es are plain) — the most it admits.
    const largest = parse(repeated(71));
    expect(refusalOf(repeated(71))).toBeUndefined();
    expect(refusalOf(repeated(72))).toMatchObject({ code: "QUERY_TOO_COMPLEX" });
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

  it("reads no document longer than 16,384 characters: whitespace is no token, but validation errors scan the text", async () => {
    // 101 unknown fields after a page of newlines: each error's location scanned the whole text
    // (a 1 MB one took 1.6 s of CPU).
    const errors = `{ ${Array.from({ length: 101 }, (_, i) => `x${i}`).join(" ")} }`;
    const long = "\n".repeat(MAX_DOCUMENT_CHARS + 1 - errors.length) + errors;
    expect(long.length).toBe(MAX_DOCUMENT_CHARS + 1);
    const refusal = {
      message: `The document has ${MAX_DOCUMENT_CHARS + 1} characters; at most ${MAX_DOCUMENT_CHARS} are read`,
      extensions: { code: "QUERY_TOO_COMPLEX" },
    };
    expect(await postJson(`${url}/graphql`, { query: long })).toMatchObject({
      status: 400,
      body: { errors: [refusal] },
    });
    const atLimit = await postJson(`${url}/graphql`, { query: long.slice(1) });
    expect(atLimit.body.errors[0].extensions.code).toBe("VALIDATION_FAILED"); // read, and its fields unknown

    const subscriber = await openSubscriber(url, `Bearer ${ADMIN_KEY}`);
    disposers.add(() => subscriber.close());
    subscriber.subscribe("long", long, {});
    await until(() => subscriber.errors.length > 0, { what: "the refusal" });
    expect(subscriber.errors).toMatchObject([[refusal]]);
  });
});
