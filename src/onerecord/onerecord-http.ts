import type { FastifyReply, FastifyRequest } from "fastify";
import type { OneRecordCaller } from "./identity/caller";
import { AppError } from "../errors";
import { type ApiVersion, CONTENT_LANGUAGE, JSON_LD, jsonLdContentType, SUPPORTED_API_VERSIONS } from "./negotiation";

/**
 * What the ONE Record plugin (onerecord.routes.ts) learns of a request before its handler runs, and
 * how its handlers answer: shared by every ONE Record route file.
 */

const callers = new WeakMap<FastifyRequest, OneRecordCaller>();
const versions = new WeakMap<FastifyRequest, ApiVersion>();

/** The authenticated caller of a ONE Record route (every route of the plugin has one). */
export function oneRecordCallerOf(request: FastifyRequest): OneRecordCaller {
  const caller = callers.get(request);
  if (!caller) throw new Error(`${request.method} ${request.url}: not a ONE Record route`);
  return caller;
}

export function rememberOneRecordCaller(request: FastifyRequest, caller: OneRecordCaller): void {
  callers.set(request, caller);
}

/** The API version negotiated from the request's Accept header. */
export function apiVersionOf(request: FastifyRequest): ApiVersion {
  return versions.get(request) ?? SUPPORTED_API_VERSIONS[0];
}

export function rememberApiVersion(request: FastifyRequest, version: ApiVersion): void {
  versions.set(request, version);
}

/** Answers a JSON-LD body (already compacted, with its context) in the negotiated version. */
export function sendJsonLd(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply
    .code(status)
    .header("content-type", jsonLdContentType(apiVersionOf(reply.request)))
    .header("content-language", CONTENT_LANGUAGE)
    .send(Buffer.from(JSON.stringify(body)));
}

/** A 201 (or 200) without a body: what a create or change answers, with Location and Type. */
export function sendCreated(reply: FastifyReply, location: string, type: string, status = 201): FastifyReply {
  return reply
    .code(status)
    .header("location", location)
    .header("type", type)
    .header("content-language", CONTENT_LANGUAGE)
    .send();
}

/** The request's JSON-LD body; a request without one is refused (415 without a Content-Type, 400 empty). */
export function jsonLdBodyOf(request: FastifyRequest): unknown {
  if (request.headers["content-type"] === undefined)
    throw new AppError("UNSUPPORTED_MEDIA_TYPE", `Send the body as ${JSON_LD}`);
  if (request.body === undefined) throw new AppError("INVALID_JSON_LD", "The body is empty; send a JSON-LD document");
  return request.body;
}
