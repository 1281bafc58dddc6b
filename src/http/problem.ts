import { randomUUID } from "node:crypto";
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { databaseUnavailable, isDatabaseUnavailable } from "../db/availability";
import { AppError, toProblem, validationError } from "../errors";

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8";

/**
 * Answers with the problem. It is sent serialised here (JSON.stringify, members in toProblem's order,
 * extensions before requestId) rather than by the route's serializer: an error path must not fail in a
 * serializer, and every route documents its problems as the one Problem schema.
 */
export function sendProblem(reply: FastifyReply, error: AppError): FastifyReply {
  if (error.retryAfterSeconds !== undefined) reply.header("retry-after", String(Math.ceil(error.retryAfterSeconds)));
  return reply
    .code(error.status)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(toProblem(error, String(reply.request.id))));
}

/** Maps anything thrown in a route to the contract's error shape; unknown failures become INTERNAL. */
export function asAppError(error: unknown, request: FastifyRequest): AppError {
  if (error instanceof AppError) return error;
  if (isDatabaseUnavailable(error)) return databaseUnavailable();
  const fastifyError = error as Partial<FastifyError> & {
    validation?: Array<{ instancePath?: string; message?: string; params?: Record<string, unknown> }>;
  };
  if (fastifyError.validation) {
    return validationError(
      fastifyError.validation.map((v) => ({
        field: fieldOf(v.instancePath, v.params, fastifyError.validationContext),
        message: v.message ?? "is invalid",
      })),
    );
  }
  switch (fastifyError.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new AppError("PAYLOAD_TOO_LARGE", "The body exceeds 1 MiB");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new AppError(
        "UNSUPPORTED_MEDIA_TYPE",
        `Content-Type "${request.headers["content-type"] ?? ""}" is not supported; send application/json (milestone ingestion also takes FSU as text/plain and XFSU as application/xml)`,
      );
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return new AppError("MALFORMED_JSON", "The body is not valid JSON");
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new AppError("MALFORMED_JSON", "The body is empty; send a JSON document");
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return new AppError("VALIDATION_FAILED", "Content-Length does not match the body");
  }
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new AppError("MALFORMED_JSON", `The body is not valid JSON: ${error.message}`);
  }
  if (typeof fastifyError.statusCode === "number" && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    // Other client errors Fastify raises itself (bad URL encoding, header limits...).
    return new AppError("VALIDATION_FAILED", fastifyError.message ?? "The request is not valid");
  }
  return new AppError("INTERNAL", "An unexpected error occurred; quote the request id when reporting it", {
    cause: error,
  });
}

/** The field an ajv error is about, named as the services name fields ("events[2].awb", "stationCodes"). */
function fieldOf(
  instancePath: string | undefined,
  params: Record<string, unknown> | undefined,
  context: string | undefined,
): string {
  const segments = (instancePath ?? "")
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const missing = params?.missingProperty ?? params?.additionalProperty;
  if (typeof missing === "string") segments.push(missing);
  const field = segments.reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : path ? `${path}.${s}` : s), "");
  return field || (context ?? "body");
}

/**
 * A whole HTTP/1.1 response carrying a problem, for sockets that never reach Fastify (requests Node
 * cannot parse, websocket upgrades it refuses); the connection is closed after it.
 */
export function rawProblemResponse(error: AppError): string {
  const body = JSON.stringify(toProblem(error, randomUUID()));
  const retryAfter =
    error.retryAfterSeconds === undefined ? "" : `Retry-After: ${Math.ceil(error.retryAfterSeconds)}\r\n`;
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ""}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retryAfter}Connection: close\r\n\r\n${body}`;
}
