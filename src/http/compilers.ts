import AjvCompiler from "@fastify/ajv-compiler";
import SerializerSelector from "@fastify/fast-json-stringify-compiler";
import type { FastifyServerOptions } from "fastify";

/**
 * Fastify's own schema compilers, as `createHttpServer` uses them: ajv (@fastify/ajv-compiler) for
 * requests and fast-json-stringify (@fastify/fast-json-stringify-compiler) for answers, with two
 * choices made here.
 */
type SchemaController = NonNullable<FastifyServerOptions["schemaController"]>;
type Factories = NonNullable<SchemaController["compilersFactory"]>;

const PROBLEM_MEDIA_TYPE = "application/problem+json";

/**
 * Validators: bodies and params without type coercion (a JSON number is not a string), query strings
 * with it, so that `?first=20` validates as the integer the schema documents — ajv converts a query
 * value as `Number()` does, which is how the services read it.
 */
export function buildValidator(): NonNullable<Factories["buildValidator"]> {
  const pool = AjvCompiler();
  type Compile = (route: { httpPart?: string }) => unknown;
  const factory = (externalSchemas: Parameters<typeof pool>[0], options: Parameters<typeof pool>[1] = {}) => {
    const strict = pool(externalSchemas, options) as unknown as Compile;
    const coercing = pool(externalSchemas, {
      ...options,
      customOptions: { ...options.customOptions, coerceTypes: true },
    } as Parameters<typeof pool>[1]) as unknown as Compile;
    return ((route: { httpPart?: string }) =>
      (route.httpPart === "querystring" ? coercing : strict)(route)) as unknown as ReturnType<typeof pool>;
  };
  return factory as NonNullable<Factories["buildValidator"]>;
}

/**
 * Serializers: fast-json-stringify from each response schema, except for problem+json. Problems are
 * rendered by `sendProblem` alone and sent already serialised (JSON.stringify, toProblem's member
 * order); their schema (Problem) documents them and the contract test checks them against it. Not
 * compiling it for every status of every route saves most of the start-up compilation.
 */
export function buildSerializer(): NonNullable<Factories["buildSerializer"]> {
  const selector = SerializerSelector();
  const factory = (externalSchemas?: unknown, options?: Parameters<typeof selector>[1]) => {
    const compile = selector(externalSchemas, options);
    return (route: Parameters<typeof compile>[0] & { contentType?: string }) =>
      route.contentType === PROBLEM_MEDIA_TYPE ? (data: unknown) => JSON.stringify(data) : compile(route);
  };
  return factory as NonNullable<Factories["buildSerializer"]>;
}
