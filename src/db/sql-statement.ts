import type { Prisma, SqlExecutor } from "./database";
import { sqlLiteral } from "./sql-literal";

/**
 * Named SQL statements with named parameters. Each statement has a home of its own
 * (`src/<feature>/sql/<operation>.sql.ts`, docs/ARCHITECTURE.md "SQL statements") and is written
 * with `sql` and `param`:
 *
 *     export const releaseClaims = statement<{ ids: string[]; tokens: string[] }>("delivery/release-claims", sql`
 *       UPDATE delivery d SET lease_until = NULL
 *       FROM unnest(${param("ids")}::uuid[], ${param("tokens")}::uuid[]) AS v(id, token) …`);
 *
 * The placeholders become `$1`, `$2`, … once, when the module loads (a name used twice is one
 * parameter). A name the parameters' type does not declare does not compile; at each run every
 * parameter must be given (null for SQL NULL) and no other, and an array only where the text casts
 * it to an array type, as the driver needs.
 */

/** A parameter's place in a statement: `${param("awb")}`. */
export class SqlParam<Name extends string> {
  constructor(readonly name: Name) {}
}

export function param<Name extends string>(name: Name): SqlParam<Name> {
  return new SqlParam(name);
}

/** SQL text with parameters in it: a statement's body, or a part several statements share. */
export class SqlFragment<Name extends string = never> {
  constructor(readonly chunks: ReadonlyArray<string | SqlParam<Name>>) {}
}

/** SQL text; only `param(…)` and other fragments go into its `${}`, never a value. */
export function sql<Name extends string = never>(
  strings: TemplateStringsArray,
  ...parts: Array<SqlParam<Name> | SqlFragment<Name>>
): SqlFragment<Name> {
  const chunks: Array<string | SqlParam<Name>> = [];
  strings.forEach((text, i) => {
    chunks.push(text);
    const part = parts[i];
    if (part instanceof SqlFragment) chunks.push(...part.chunks);
    else if (part !== undefined) chunks.push(part);
  });
  return new SqlFragment(chunks);
}

/** Text the source itself computes (a column list, a constant), never a value from outside. */
export function sqlText(text: string): SqlFragment {
  return new SqlFragment([text]);
}

/**
 * A column of a statement's rows sent as one parameter, a JSON array (`jsonColumn`), and read in the
 * text by `jsonRows`. Through Prisma an array parameter is converted value by value: a statement of
 * nine 500-value arrays cost 4.4-4.6 ms of the gateway's thread that way, 1.9 ms as nine JSON arrays.
 */
export type JsonColumn = string & { readonly __jsonColumn: true };

/**
 * The rows of the named JsonColumn parameters side by side, as `unnest` of arrays would give them:
 * `FROM ${jsonRows("ids", "names")} WITH ORDINALITY AS v(id, name, i)`. Each value is text (a JSON
 * null is NULL): cast it where another type is meant.
 */
export function jsonRows<Name extends string>(...names: Name[]): SqlFragment<Name> {
  const chunks: Array<string | SqlParam<Name>> = ["ROWS FROM ("];
  names.forEach((name, i) => chunks.push(`${i === 0 ? "" : ", "}json_array_elements_text(`, param(name), "::json)"));
  chunks.push(")");
  return new SqlFragment(chunks);
}

export function jsonColumn(values: ReadonlyArray<string | number | boolean | null>): JsonColumn {
  // PostgreSQL refuses a lone UTF-16 surrogate in JSON text; sent as text it became U+FFFD (the
  // driver's UTF-8), and so it does here.
  return JSON.stringify(values.map((value) => (typeof value === "string" ? toWellFormed(value) : value))) as JsonColumn;
}

/** String.prototype.toWellFormed (ES2024; Node 20+), which this project's TypeScript library (ES2023) does not declare. */
const toWellFormed = (text: string): string => (text as string & { toWellFormed(): string }).toWellFormed();

/** Where a statement runs: the raw driver, or Prisma (a transaction's client included). */
export type SqlRunner = Pick<SqlExecutor, "query"> | Pick<Prisma, "$queryRawUnsafe">;

type Values = Record<string, unknown>;

interface Placeholders {
  /** Parameter names in position order: `$1` is the first. */
  readonly names: readonly string[];
  /** Names written with an array cast (`::text[]`) at least once. */
  readonly arrays: ReadonlySet<string>;
}

const ARRAY_CAST = /^::[a-z_ ]+\[\]/i;

function placeholdersOf(body: SqlFragment<string>): Placeholders {
  const names: string[] = [];
  const arrays = new Set<string>();
  body.chunks.forEach((chunk, i) => {
    if (typeof chunk === "string") return;
    if (!names.includes(chunk.name)) names.push(chunk.name);
    const next = body.chunks[i + 1];
    if (typeof next === "string" && ARRAY_CAST.test(next)) arrays.add(chunk.name);
  });
  return { names, arrays };
}

/** The values in position order, after checking that they are exactly the statement's parameters. */
function checkedValues(name: string, placeholders: Placeholders, values: Values): unknown[] {
  const extra = Object.keys(values).filter((key) => !placeholders.names.includes(key));
  if (extra.length > 0) throw new Error(`SQL ${name}: no parameter ${extra.join(", ")}`);
  return placeholders.names.map((key) => {
    const value = values[key];
    if (value === undefined) throw new Error(`SQL ${name}: parameter ${key} not given`);
    if (Array.isArray(value) && !placeholders.arrays.has(key))
      throw new Error(`SQL ${name}: parameter ${key} is an array, and the text casts it to no array type`);
    return value;
  });
}

export interface SqlStatement<Params extends Values, Row> {
  /** `<feature>/<operation>`, as its file is named. */
  readonly name: string;
  /** With positional parameters, as the driver takes it. */
  readonly text: string;
  /** Parameter names in position order. */
  readonly parameters: readonly string[];
  /** The values in position order. */
  values(params: Params): unknown[];
  rows(on: SqlRunner, params: Params): Promise<Row[]>;
  /** Through Prisma: how many rows the statement wrote (for statements without RETURNING). */
  affectedRows(on: Pick<Prisma, "$executeRawUnsafe">, params: Params): Promise<number>;
}

/** One statement, its parameters named; `Row`: what each row it answers holds. */
export function statement<Params extends Values = Record<never, never>, Row = never>(
  name: string,
  body: SqlFragment<keyof Params & string>,
): SqlStatement<Params, Row> {
  const placeholders = placeholdersOf(body);
  const text = body.chunks
    .map((chunk) => (typeof chunk === "string" ? chunk : `$${placeholders.names.indexOf(chunk.name) + 1}`))
    .join("");
  const values = (params: Params) => checkedValues(name, placeholders, params);
  return {
    name,
    text,
    parameters: placeholders.names,
    values,
    rows: (on, params) =>
      "$queryRawUnsafe" in on
        ? on.$queryRawUnsafe<Row[]>(text, ...values(params))
        : on.query<Row>(text, values(params)),
    affectedRows: (on, params) => on.$executeRawUnsafe(text, ...values(params)),
  };
}

export interface SqlScript<Params extends Values> {
  readonly name: string;
  /** The statements with every value written in as a constant (db/sql-literal.ts). */
  render(params: Params): string;
  /** Runs it in one round trip, one implicit transaction (`SqlExecutor.script`): each statement's rows. */
  run(on: Pick<SqlExecutor, "script">, params: Params): Promise<unknown[][]>;
}

/**
 * Statements separated by semicolons, run as one script: for a lock that one statement takes and the
 * next ones must run under. Parameters are named as in `statement`, and written in as constants.
 */
export function script<Params extends Values = Record<never, never>>(
  name: string,
  body: SqlFragment<keyof Params & string>,
): SqlScript<Params> {
  const placeholders = placeholdersOf(body);
  const render = (params: Params) => {
    const literals = checkedValues(name, placeholders, params).map(sqlLiteral);
    return body.chunks
      .map((chunk) => (typeof chunk === "string" ? chunk : literals[placeholders.names.indexOf(chunk.name)]!))
      .join("");
  };
  return { name, render, run: (on, params) => on.script(render(params)) };
}
