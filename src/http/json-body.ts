import secureJson from "secure-json-parse";
import { AppError } from "../errors";

/**
 * A JSON request body as Fastify's own parser reads it (with prototype-poisoning protection), except
 * that an empty body reads as "no body": clients often send Content-Type on GET and DELETE, and the
 * route decides if one is needed. Malformed JSON is MALFORMED_JSON.
 */
export function parseJsonBody(text: string): unknown {
  if (text === "") return undefined;
  try {
    return secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    throw new AppError("MALFORMED_JSON", `The body is not valid JSON: ${(error as Error).message}`);
  }
}

/** `parseJsonBody` as a Fastify content-type parser's callback: the value, or the error, to `done`. */
export function parseJsonBodyInto(text: string, done: (error: Error | null, body?: unknown) => void): void {
  let body: unknown;
  try {
    body = parseJsonBody(text);
  } catch (error) {
    return done(error as Error, undefined);
  }
  done(null, body);
}
