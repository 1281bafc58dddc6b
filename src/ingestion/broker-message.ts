import { createHash } from "node:crypto";
import { AppError } from "../errors";
import { parseMilestones } from "../milestones/milestone.validate";
import {
  carrierFormatOf,
  mediaTypeOf,
  type MessageContents,
  readCarrierMessage,
  type ReadOptions,
} from "./carrier-ingest";
import { parseJsonBody } from "../http/json-body";

/** The largest message body read, as for a REST body (1 MiB): a larger one is dead-lettered unread. */
export const MAX_BROKER_MESSAGE_BYTES = 1_048_576;

/** The AMQP properties that tell one published message from another, when the publisher sets them. */
export interface BrokerMessageProperties {
  messageId?: string | undefined;
  /** AMQP `timestamp`: seconds since 1970. */
  timestamp?: number | undefined;
}

/**
 * What identifies a broker message, the same each time the broker delivers it: the SHA-256
 * (base64url) of its `messageId` and `timestamp` when set, and its body. Two messages are told apart
 * by either (a publisher reusing a messageId for another body does not lose it); two bodies alike
 * without either are one message.
 */
export function messageIdentityOf(properties: BrokerMessageProperties, body: Buffer): string {
  const { messageId, timestamp } = properties;
  return createHash("sha256")
    .update(
      JSON.stringify([
        typeof messageId === "string" ? messageId : null,
        typeof timestamp === "number" ? timestamp : null,
      ]),
    )
    .update("\n")
    .update(body)
    .digest("base64url");
}

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
  options: ReadOptions,
  properties: BrokerMessageProperties = {},
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
  // Read as a REST body is (an empty one is no body, which the milestone rules then refuse). An
  // event with neither eventId nor timestamp is keyed by the message, so a redelivery is the same event.
  const json = parseJsonBody(body.toString("utf8"));
  return {
    events: parseMilestones(json, {
      enforceCheckDigit: options.enforceCheckDigit,
      now: options.now,
      isStation: options.isStation,
      messageIdentity: messageIdentityOf(properties, body),
    }),
    statuses: [],
  };
}
