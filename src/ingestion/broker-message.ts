import secureJson from "secure-json-parse";
import { AppError } from "../errors";
import { type MilestoneInput, parseMilestones } from "../milestones/milestone.validate";
import type { ParseOptions } from "./carrier-message";
import { carrierFormatOf, readCarrierMessage } from "./carrier-ingest";

/** The largest message body read, as for a REST body (1 MiB): a larger one is dead-lettered unread. */
export const MAX_BROKER_MESSAGE_BYTES = 1_048_576;

/**
 * The milestones of one broker message, read by its AMQP `contentType` as REST reads a body by its
 * Content-Type: text/plain is FSU, application/xml and text/xml XFSU, application/json (or no content
 * type at all, as many publishers send JSON) the JSON ingestion takes. A message that cannot be read
 * throws the AppError REST would answer with (VALIDATION_FAILED, MALFORMED_JSON,
 * UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE); the consumer dead-letters it with that reason.
 */
export function readBrokerMessage(
  contentType: string | undefined,
  body: Buffer,
  options: ParseOptions,
): MilestoneInput[] {
  if (body.length > MAX_BROKER_MESSAGE_BYTES)
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `The message has ${body.length} bytes, more than ${MAX_BROKER_MESSAGE_BYTES} are read`,
    );
  const format = carrierFormatOf(contentType);
  if (format) return readCarrierMessage(format, body.toString("utf8"), options);
  const mediaType = (contentType ?? "").split(";")[0]!.trim().toLowerCase();
  if (mediaType !== "" && mediaType !== "application/json")
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content type "${mediaType}" is not read: text/plain (FSU), application/xml or text/xml (XFSU), application/json`,
    );
  let json: unknown;
  try {
    json = secureJson.parse(body.toString("utf8"), undefined, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    throw new AppError("MALFORMED_JSON", `The message is not valid JSON: ${(error as Error).message}`);
  }
  return parseMilestones(json, { enforceCheckDigit: options.enforceCheckDigit, now: options.now });
}
