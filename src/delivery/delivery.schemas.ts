/**
 * JSON schemas of the delivery routes. A request the schema refuses is explained by the service's own
 * checks (delivery.service.ts), in the order it makes them: the subscription first (404 when it is not
 * the caller's), then the query.
 */
import { objectSchema, PATTERNS } from "../http/schema";
import type { DeliveryAttemptView, DeliveryView } from "./delivery.service";

export const DELIVERY_STATUSES = ["PENDING", "DELIVERED", "DEAD", "PARKED"] as const;
/** The messages of delivery.service.ts for what the schemas refuse before it runs. */
export const DELIVERY_MESSAGES = {
  deliveryId: "must be a delivery id (a UUID)",
  instant: "must be an ISO 8601 date-time",
} as const;

const instant = { type: "string", format: "date-time" } as const;
const nullableInstant = { type: ["string", "null"], format: "date-time" } as const;

export const deliverySchema = objectSchema<DeliveryView>({
  $id: "Delivery",
  properties: {
    deliveryId: { type: "string", format: "uuid", description: "Also the webhook-id header of every attempt" },
    subscriptionId: { type: ["string", "null"], description: "Null once the subscription is deleted" },
    eventId: { type: "string", format: "uuid" },
    clientEventId: { type: ["string", "null"], description: "The eventId the ingesting caller gave, or null" },
    callback: { type: "string" },
    status: {
      type: "string",
      enum: DELIVERY_STATUSES,
      description:
        "PARKED: its subscription is disabled; not attempted until its owner enables it, then PENDING and due at once",
    },
    attemptCount: { type: "integer" },
    nextAttemptAt: { ...nullableInstant, description: "PENDING only: when the next attempt is due (null when PARKED)" },
    lastError: { type: ["string", "null"] },
    createdAt: instant,
    completedAt: nullableInstant,
    payload: { type: "string", description: "The exact JSON body sent to the callback" },
    attempts: {
      type: "array",
      description: "Oldest first",
      items: objectSchema<DeliveryAttemptView>({
        properties: {
          startedAt: instant,
          durationMs: { type: "integer" },
          statusCode: { type: ["integer", "null"], description: "The callback's status; null when none came" },
          error: { type: ["string", "null"] },
        },
      }),
    },
  },
});

export const subscriptionIdParams = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", pattern: PATTERNS.uuid, description: "The subscription's id" } },
} as const;

export const deliveryIdParams = {
  type: "object",
  required: ["deliveryId"],
  properties: {
    deliveryId: { type: "string", pattern: PATTERNS.uuid, description: "The delivery's id (its webhook-id)" },
  },
} as const;

export const listQuery = {
  type: "object",
  properties: {
    status: { type: "string", enum: DELIVERY_STATUSES },
    first: { type: "integer", minimum: 1, maximum: 500, default: 50, description: "How many, newest first" },
  },
} as const;

export const redeliverQuery = {
  type: "object",
  properties: {
    from: { type: "string", description: "Created at or after this instant (ISO 8601)" },
    to: { type: "string", description: "Created before this instant (ISO 8601)" },
  },
} as const;
