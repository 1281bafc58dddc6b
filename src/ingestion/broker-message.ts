import { AppError } from "../errors";
import { parseMilestones } from "../milestones/milestone.validate";
import type { ParseOptions } from "./carrier-message";
import { carrierFormatOf, mediaTypeOf, type MessageContents, readCarrierMessage } from "./carrier-ingest";
import { parseJsonBody } from "../http/json-body";

/** The largest message body read, as for a REST body (1 MiB): a larger one is dead-lettered unread. */
export const MAX_BROKER_MESSAGE_BYTES = 1_048_576;

/**
 * The milestones (and a carrier message's statuses) of one broker message, read by its AMQP `contentType` as REST reads a body by its
 * Content-Type: text/plain is FSU, application/xml and text/xml XFSU, application/json (or no content
 * type at all, as many publishers send JSON) the JSON ingestion takes. A message that cannot be read
 * throws the AppError REST would answer with (VALIDATION_FAILED, MALFORMED_JSON,
 * UNSUPPORTED_MEDIA_TYPE, PAYLOAD_TOO_LARGE); the consumer dead-letters it with that reason.
 */
export function readBrokerMessage(
  contentType: string | undefined,
  body: Buffer,
  options: ParseOptions,
): MessageContents {
  if (body.length > MAX_BROKER_MESSAGE_BYTES)
    throw new AppError(
      "PAYLOAD_TOO_LARGE",
      `The message has ${body.length} bytes, more than ${MAX_BROKER_MESSAGE_BYTES} are read`,
    );
  const format = carrierFormatOf(contentType);
  if (format) return readCarrierMessage(format, body.toString("utf8"), options);
  const mediaType = mediaTypeOf(contentType);
  if (mediaType !== "" && mediaType !== "application/json")
    throw new AppError(
      "UNSUPPORTED_MEDIA_TYPE",
      `Content type "${mediaType}" is not read: text/plain (FSU), application/xml or text/xml (XFSU), application/json`,
    );
  // Read as a REST body is (an empty one is no body, which the milestone rules then refuse).
  const json = parseJsonBody(body.toString("utf8"));
  return {
    events: parseMilestones(json, { enforceCheckDigit: options.enforceCheckDigit, now: options.now }),
    statuses: [],
  };
}
