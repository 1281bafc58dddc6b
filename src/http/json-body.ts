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

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/**
 * A JSON body's bytes as text. JSON is UTF-8 (RFC 8259): a body with bytes that are not is
 * MALFORMED_JSON, never read with U+FFFD in their place and stored so.
 */
export function decodeJsonText(bytes: Buffer): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new AppError("MALFORMED_JSON", "The body is not valid UTF-8");
  }
}

/** A JSON body's bytes, decoded strictly and parsed, to a Fastify content-type parser's `done`. */
export function parseJsonBytesInto(bytes: Buffer, done: (error: Error | null, body?: unknown) => void): void {
  let text: string;
  try {
    text = decodeJsonText(bytes);
  } catch (error) {
    return done(error as Error, undefined);
  }
  parseJsonBodyInto(text, done);
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
