import type { FastifyRequest } from "fastify";
import type { AppError } from "../errors";
import { asAppError } from "./problem";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Called when the route's schema refuses a request: runs the route's own reading of its input —
     * the same checks, in the same order, that its handler (and GraphQL) would make — and throws the
     * AppError they throw, so a refusal says what the service says, field by field. Must not write
     * anything. When it throws nothing, the schema's own errors are reported.
     */
    explainInvalid?: (request: FastifyRequest) => unknown;
  }
}

/** A request its route's schema refused, as the contract's error. */
export async function refusal(error: unknown, request: FastifyRequest): Promise<AppError> {
  const explain = request.routeOptions.config.explainInvalid;
  if (explain) {
    try {
      await explain(request);
    } catch (explained) {
      return asAppError(explained, request);
    }
  }
  return asAppError(error, request);
}

/** Whether Fastify refused the request by its schema (ajv's errors in `validation`). */
export function isSchemaRefusal(error: unknown): boolean {
  return typeof error === "object" && error !== null && Array.isArray((error as { validation?: unknown }).validation);
}
