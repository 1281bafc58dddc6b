/**
 * Building blocks of the route schemas. One schema per route and part serves three readers: Fastify's
 * ajv checks requests with it, fast-json-stringify writes responses with it, and @fastify/swagger
 * publishes it as /openapi.json. fast-json-stringify writes what a response schema lists and nothing
 * else (an unlisted field is dropped, a single-typed field of another type is coerced), so the shape
 * of every response schema is tied here, at compile time, to the TypeScript type the code sends.
 */

import type { FastifyInstance } from "fastify";

/** A JSON Schema (draft 2020-12 as OpenAPI 3.1 has it; ajv and fast-json-stringify read the same). */
export type JsonSchema = { readonly [keyword: string]: unknown };

type TypeName<T> = [T] extends [string | Date]
  ? "string"
  : [T] extends [number]
    ? "integer" | "number"
    : [T] extends [boolean]
      ? "boolean"
      : [T] extends [readonly unknown[]]
        ? "array"
        : "object";

type TypeOf<T> = null extends T
  ? { readonly type: readonly [TypeName<NonNullable<T>>, "null"] }
  : { readonly type: TypeName<T> };

type ShapeOf<T> = [T] extends [string | number | boolean | Date]
  ? unknown
  : [T] extends [readonly (infer E)[]]
    ? { readonly items: SchemaOf<E> }
    : { readonly properties: PropertiesOf<T> };

/**
 * The schema of a value of type T as far as TypeScript can say: its JSON type, `"null"` in the type
 * exactly when T can be null, an array's items, and an object's properties — exactly T's keys.
 */
export type SchemaOf<T> = JsonSchema & TypeOf<T> & ShapeOf<NonNullable<T>>;

/** The `properties` of an object schema for T: every key of T, and no other (an object literal's excess keys fail). */
export type PropertiesOf<T> = { readonly [K in keyof T]-?: SchemaOf<T[K]> };

/** An object schema that lists every field of T, each required. */
export type ObjectSchemaOf<T> = JsonSchema & {
  readonly type: "object";
  readonly required: readonly string[];
  readonly properties: PropertiesOf<T>;
};

/**
 * The response schema of a JSON object of type T: every field listed with its type, and required (the
 * code always sends every field; an unavailable one is null). Other keywords (description, `$id`) are
 * kept. The properties are checked against T: a missing or extra field, or a nullable one declared
 * without "null" (or the other way round), does not compile.
 */
export function objectSchema<T>(schema: { readonly properties: PropertiesOf<T> } & JsonSchema): ObjectSchemaOf<T> {
  return { type: "object", required: Object.keys(schema.properties), ...schema };
}

/** The same object schema, null allowed (`type: ["object", "null"]`). */
export function nullable<T>(schema: ObjectSchemaOf<T>): SchemaOf<T | null> {
  return { ...schema, type: ["object", "null"] } as unknown as SchemaOf<T | null>;
}

/**
 * Patterns the request schemas share, each accepting exactly what a domain check accepts (the
 * services keep the checks; test/route-schemas.test.ts shows each pattern and its check agree).
 */
export const PATTERNS = {
  /** An AWB in any accepted spelling (domain/awb.ts parseAwb, which trims first). */
  awb: "^\\s*\\d{3}[- ]?\\d{8}\\s*$",
  /** An id this service issued (domain/ids.ts UUID_PATTERN, case-insensitive). */
  uuid: "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$",
  /** Some character other than white space (a string that is not empty once trimmed). */
  notBlank: "\\S",
} as const;

/** Adds shared schemas (each with `$id`) that routes refer to with `ref`, once per instance. */
export function addSchemas(app: FastifyInstance, ...schemas: readonly JsonSchema[]): void {
  for (const schema of schemas) if (app.getSchema(String(schema.$id)) === undefined) app.addSchema(schema);
}

/** `{ $ref }` to a schema added with `app.addSchema` (its `$id`), as Fastify and @fastify/swagger resolve it. */
export const ref = (id: string): JsonSchema => ({ $ref: `${id}#` });

/** RFC 9457 problem details, as `toProblem` (errors.ts) renders every error of every route. */
export const problemSchema = {
  $id: "Problem",
  type: "object",
  description: "RFC 9457 problem details (application/problem+json)",
  required: ["type", "title", "status", "detail", "code", "requestId"],
  properties: {
    type: { type: "string", description: "urn:cargo-gateway:problem:<code in kebab case>" },
    title: { type: "string" },
    status: { type: "integer" },
    detail: { type: "string" },
    code: { type: "string", description: "The error code (docs/API.md lists them)" },
    errors: {
      type: "array",
      description: "VALIDATION_FAILED: every problem of the request, by field",
      items: {
        type: "object",
        required: ["field", "message"],
        properties: { field: { type: "string" }, message: { type: "string" } },
      },
    },
    unknownCodes: { type: "array", items: { type: "string" }, description: "STATION_NOT_FOUND: the unknown codes" },
    subscriptionId: { type: "string", description: "SUBSCRIPTION_EXISTS: the subscription that exists" },
    limit: { type: "integer", description: "SUBSCRIPTION_LIMIT_REACHED: the client's limit" },
    networkError: { type: ["string", "null"], description: "CALLBACK_UNREACHABLE: the network error's code" },
    optionsStatus: { type: "integer", description: "CALLBACK_INVALID: the status the callback answered OPTIONS with" },
    allow: { type: ["string", "null"], description: "CALLBACK_INVALID: the Allow header the callback answered" },
    checks: { type: "object", description: "GET /readyz: the readiness report (as its 200 answer)" },
    requestId: { type: "string", description: "The request's id, as in the x-request-id header" },
  },
  additionalProperties: true,
} as const;

/** The problem+json statuses a route answers, each with what it means there. */
const PROBLEMS = {
  400: "The request is not valid (VALIDATION_FAILED, with `errors` naming each field) or its body is not JSON (MALFORMED_JSON)",
  401: "No API key, or an unknown or revoked one (UNAUTHENTICATED)",
  403: "The API key lacks the scope (INSUFFICIENT_SCOPE)",
  404: "No such resource",
  409: "A conflict with the stored state",
  413: "The body exceeds 1 MiB (PAYLOAD_TOO_LARGE)",
  415: "The body's media type is not accepted (UNSUPPORTED_MEDIA_TYPE)",
  422: "The callback cannot receive notifications (CALLBACK_INVALID)",
  424: "The callback could not be reached (CALLBACK_UNREACHABLE)",
  429: "The API key is over its rate limit, or the caller's address over its budget of failed authentications (RATE_LIMITED); retry after Retry-After seconds",
  500: "An unexpected failure (INTERNAL); quote requestId when reporting it",
  503: "The database is unreachable (SERVICE_UNAVAILABLE); retry after Retry-After seconds",
} as const;

export type ProblemStatus = keyof typeof PROBLEMS;

/**
 * Response entries for problem+json answers (`$ref: Problem#`), by status; `detail` overrides what a
 * status means for one route. Problems are rendered by `http/problem.ts` alone (`toProblem`), sent
 * already serialised, and checked against Problem by the contract test.
 */
export function problems(
  statuses: readonly ProblemStatus[],
  detail: Partial<Record<ProblemStatus, string>> = {},
): Record<number, JsonSchema> {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      {
        description: detail[status] ?? PROBLEMS[status],
        ...(status === 429 || status === 503
          ? { headers: { "retry-after": { type: "integer", description: "Seconds to wait before retrying" } } }
          : {}),
        content: { "application/problem+json": { schema: ref("Problem") } },
      },
    ]),
  );
}

/** What every route can answer: an unexpected failure. */
export const ALWAYS: readonly ProblemStatus[] = [500];
/** Routes that read or write the database: unreachable → 503. */
export const DATABASE: readonly ProblemStatus[] = [503];
/** Routes that take an API key: missing or unknown, wrong scope, over the rate limit. */
export const KEYED: readonly ProblemStatus[] = [401, 403, 429];
/** Routes that read a JSON body: malformed (400), too large, not JSON. */
export const WITH_BODY: readonly ProblemStatus[] = [400, 413, 415];
