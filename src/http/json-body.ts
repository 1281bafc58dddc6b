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
    throw new AppError("MALFORMED_JSON", `The body is not valid JSON: ${(error as Error).message}${hintFor(text)}`);
  }
}

/** A carrier message sent with the JSON content type: say which content type reads it. */
function hintFor(text: string): string {
  if (/^FSU\/\d/m.test(text.slice(0, 4_096)))
    return " (it looks like a Cargo-IMP FSU message: send it with Content-Type: text/plain)";
  if (/^\s*</.test(text))
    return " (it looks like XML: send a Cargo-XML XFSU message with Content-Type: application/xml)";
  return "";
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
