import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is a safe token, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * Headers on every answer: the request id, and nosniff (a JSON answer must never be read as a page or
 * script by a browser).
 */
export function securityHeaders(id: string): { "x-request-id": string; "x-content-type-options": "nosniff" } {
  return { "x-request-id": id, "x-content-type-options": "nosniff" };
}
