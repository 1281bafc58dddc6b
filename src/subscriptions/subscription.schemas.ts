/**
 * JSON schemas of the subscription routes. A request the schema refuses is explained by the route's
 * own reading (subscription.validate.ts, then the service's `validate`, as GraphQL's input is); the
 * service keeps what a schema cannot say: known status codes, the check digit, the callback URL.
 */
import { STATUS_CODES } from "../domain/status";
import { type JsonSchema, objectSchema, PATTERNS } from "../http/schema";
import type { subscriptionView } from "./subscription.view";

export const subscriptionSchema = objectSchema<ReturnType<typeof subscriptionView>>({
  $id: "Subscription",
  properties: {
    subscriptionId: { type: "string", format: "uuid" },
    AWB: { type: "string", examples: ["020-12345675"] },
    Callback: { type: "string", examples: ["https://forwarder.example/hooks/awb"] },
    States: {
      type: "string",
      description: 'The codes, comma-separated in the canonical order, or "*"',
      examples: ["DEP,ARR,TOA"],
    },
    expiresAt: {
      type: ["string", "null"],
      format: "date-time",
      description: "After this nothing is sent and the subscription no longer counts toward the cap; null: never",
    },
    disabledAt: {
      type: ["string", "null"],
      format: "date-time",
      description:
        "When delivery disabled it, every attempt having failed for DELIVERY_DISABLE_AFTER; null: enabled. Enable it again with POST …/subscribe/{id}/enable",
    },
    disabledReason: { type: ["string", "null"], description: "Why it was disabled" },
  },
});

const awb = {
  type: "string",
  pattern: PATTERNS.awb,
  description:
    "3-digit prefix and 8-digit serial: 020-12345675, 02012345675 or 020 12345675 (with AWB_CHECK_DIGIT=enforce, the check digit must be right)",
  examples: ["020-12345675"],
} as const;
const callback = {
  type: "string",
  pattern: PATTERNS.notBlank,
  description:
    "An absolute http(s) URL within the client's registered prefixes; it must answer OPTIONS with an Allow that includes POST",
  examples: ["https://forwarder.example/hooks/awb"],
} as const;
const states = {
  description: `Status codes (${STATUS_CODES.join(" ")}) separated by commas or spaces, in any case, or "*" for every code; or an array of codes.`,
  oneOf: [
    { type: "string", examples: ["DEP, ARR, TOA"] },
    { type: "array", items: { type: "string" }, examples: [["DEP", "ARR", "TOA"]] },
  ],
} as const;
const expiresAt = {
  type: ["string", "null"],
  description:
    "Optional: an ISO 8601 date-time with offset, in the future, after which nothing is sent and the subscription no longer counts; null or absent: never (an update without it clears it)",
  examples: ["2027-01-31T00:00:00Z"],
} as const;

/** Exactly one of two spellings of a field. */
const oneOf = (lower: string, upper: string) => ({ oneOf: [{ required: [lower] }, { required: [upper] }] });

/** The body of POST (and, with `subscriptionId`, PUT): each field in either spelling, not both. */
export function subscriptionBody({ withId }: { withId: boolean }): JsonSchema {
  return {
    type: "object",
    description: "Each field in either spelling (awb or AWB, callback or Callback, states or States), not both.",
    additionalProperties: false,
    properties: {
      ...(withId
        ? { subscriptionId: { type: "string", pattern: PATTERNS.uuid, description: "If given, the id in the path" } }
        : {}),
      awb,
      AWB: awb,
      callback,
      Callback: callback,
      states,
      States: states,
      expiresAt,
      ExpiresAt: expiresAt,
    },
    allOf: [oneOf("awb", "AWB"), oneOf("callback", "Callback"), oneOf("states", "States")],
  };
}

export const subscriptionIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", pattern: PATTERNS.uuid, description: "The subscription's id" } },
} as const;

export const listQuery = {
  type: "object",
  additionalProperties: false,
  properties: {
    awb: { ...awb, description: "Only this AWB's subscriptions (any accepted spelling)" },
    callback: { type: "string", description: "Only those sending to this callback URL" },
  },
} as const;
