import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Principal, requireScope } from "../clients/client.service";
import type { DeliveryService } from "../delivery/delivery.service";
import type { MilestoneService } from "./milestone.service";
import { parseMilestones } from "./milestone.validate";
import { milestoneView } from "./milestone.view";

const security = [{ bearer: [] }];
const problem = { $ref: "Problem#" };
const milestoneInput = {
  type: "object",
  required: ["awb", "state"],
  additionalProperties: false,
  properties: {
    eventId: { type: "string", description: "Your id for the event: a repeat is stored and notified once; shown back as clientEventId", example: "FSU-2026-11-20-000123" },
    awb: { type: "string", description: "The AWB, e.g. 020-12345675 (or 02012345675)", example: "020-12345675" },
    state: { type: "string", enum: ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD", "DIS", "TOA"], example: "DEP" },
    timestamp: { type: "string", format: "date-time", description: "When it happened, ISO 8601 with offset; default: when received", example: "2026-11-20T07:30:00Z" },
    toaTimestamp: { type: "string", format: "date-time", description: "TOA only: the new time of arrival" },
    station: { type: "string", description: "IATA code of the station, upper case", example: "FRA" },
    flight: { type: "string", description: "Flight designator", example: "LH8160" },
  },
};
const ingestResult = {
  type: "object",
  properties: {
    eventId: { type: "string", description: "The gateway's id of the stored event (for a repeat: the one stored first)" },
    clientEventId: { type: ["string", "null"], description: "The eventId you sent, or null" },
    duplicate: { type: "boolean" },
    matchedSubscriptions: { type: "integer" },
  },
};
const subscriptionIdParam = { type: "object", required: ["id"], properties: { id: { type: "string", format: "uuid", description: "The subscription's id" } } };

export function registerMilestoneRoutes(
  app: FastifyInstance,
  deps: { milestones: MilestoneService; deliveries: DeliveryService; carrier: string; enforceCheckDigit: boolean; authenticate: (request: FastifyRequest) => Promise<Principal | null> },
): void {
  const { milestones, deliveries, carrier, enforceCheckDigit, authenticate } = deps;
  const base = `/${carrier}/handling/shipment`;

  app.post(`${base}/events`, {
    schema: {
      tags: ["milestones"], security, summary: "Ingest one milestone or up to 1,000 (scope events:write)",
      body: {
        description: "One milestone, or an array of up to 1,000",
        oneOf: [milestoneInput, { type: "array", minItems: 1, maxItems: 1000, items: milestoneInput }],
        example: [{ eventId: "FSU-2026-11-20-000123", awb: "020-12345675", state: "DEP", timestamp: "2026-11-20T07:30:00Z", station: "FRA", flight: "LH8160" }],
      },
      response: { 202: { type: "object", properties: { events: { type: "array", items: ingestResult } } }, 400: problem, 401: problem, 403: problem },
    },
  }, async (request, reply) => {
    requireScope(await authenticate(request), "events:write");
    const events = parseMilestones(request.body, { enforceCheckDigit, now: new Date() });
    const results = await milestones.ingest(events);
    return reply.code(202).send({ events: results });
  });

  app.get<{ Querystring: { awb?: string } }>(`${base}/events`, {
    schema: { tags: ["milestones"], security, summary: "The stored milestones of an AWB, in the order they happened (scope events:read or subscriptions)", querystring: { type: "object", properties: { awb: { type: "string" } } } },
  }, async (request) => {
    requireScope(await authenticate(request), "events:read", "subscriptions");
    return (await milestones.history(request.query.awb)).map(milestoneView);
  });

  app.get<{ Params: { id: string }; Querystring: { status?: string; first?: string } }>(`${base}/subscribe/:id/deliveries`, {
    schema: {
      tags: ["deliveries"], security, summary: "A subscription's deliveries with their attempts, newest first",
      params: subscriptionIdParam,
      querystring: { type: "object", properties: { status: { type: "string", enum: ["PENDING", "DELIVERED", "DEAD"] }, first: { type: "integer", minimum: 1, maximum: 200, default: 50 } } },
    },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    const first = request.query.first === undefined ? 50 : Number(request.query.first);
    return deliveries.listForSubscription(principal, request.params.id, { status: request.query.status, first });
  });

  app.post<{ Params: { id: string }; Querystring: { from?: string; to?: string } }>(`${base}/subscribe/:id/redeliver`, {
    schema: {
      tags: ["deliveries"], security, summary: "Requeue every dead delivery of a subscription, optionally created in [from, to)",
      params: subscriptionIdParam,
      querystring: { type: "object", properties: { from: { type: "string", format: "date-time", description: "Created at or after" }, to: { type: "string", format: "date-time", description: "Created before" } } },
      response: { 200: { type: "object", properties: { requeued: { type: "integer" } } }, 401: problem, 403: problem, 404: problem },
    },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    return { requeued: await deliveries.redeliverDead(principal, request.params.id, request.query) };
  });

  app.post<{ Params: { deliveryId: string } }>(`${base}/deliveries/:deliveryId/redeliver`, {
    schema: {
      tags: ["deliveries"], security, summary: "Send one dead or delivered notification again (same webhook-id)",
      params: { type: "object", required: ["deliveryId"], properties: { deliveryId: { type: "string", format: "uuid", description: "The delivery's id (its webhook-id)" } } },
      response: { 401: problem, 403: problem, 404: problem },
    },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    return deliveries.redeliver(principal, request.params.deliveryId);
  });
}
