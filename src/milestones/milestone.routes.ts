import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Principal, requireScope } from "../clients/client.service";
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
    eventId: {
      type: "string",
      description: "Your id for the event: a repeat is stored and notified once; shown back as clientEventId",
      example: "FSU-2026-11-20-000123",
    },
    awb: { type: "string", description: "The AWB, e.g. 020-12345675 (or 02012345675)", example: "020-12345675" },
    state: {
      type: "string",
      enum: ["RCS", "MAN", "DEP", "ARR", "RCF", "NFD", "DLV", "DDL", "RCT", "TFD", "DIS", "TOA"],
      example: "DEP",
    },
    timestamp: {
      type: "string",
      format: "date-time",
      description: "When it happened, ISO 8601 with offset; default: when received",
      example: "2026-11-20T07:30:00Z",
    },
    toaTimestamp: { type: "string", format: "date-time", description: "TOA only: the new time of arrival" },
    station: { type: "string", description: "IATA code of the station, upper case", example: "FRA" },
    flight: { type: "string", description: "Flight designator", example: "LH8160" },
  },
};
const ingestResult = {
  type: "object",
  properties: {
    eventId: {
      type: "string",
      description: "The gateway's id of the stored event (for a repeat: the one stored first)",
    },
    clientEventId: { type: ["string", "null"], description: "The eventId you sent, or null" },
    duplicate: { type: "boolean" },
    matchedSubscriptions: { type: "integer" },
  },
};

export function registerMilestoneRoutes(
  app: FastifyInstance,
  deps: {
    milestones: MilestoneService;
    carrier: string;
    enforceCheckDigit: boolean;
    authenticate: (request: FastifyRequest) => Promise<Principal | null>;
  },
): void {
  const { milestones, carrier, enforceCheckDigit, authenticate } = deps;
  const base = `/${carrier}/handling/shipment`;

  app.post(
    `${base}/events`,
    {
      schema: {
        tags: ["milestones"],
        security,
        summary: "Ingest one milestone or up to 1,000 (scope events:write)",
        body: {
          description: "One milestone, or an array of up to 1,000",
          oneOf: [milestoneInput, { type: "array", minItems: 1, maxItems: 1000, items: milestoneInput }],
          example: [
            {
              eventId: "FSU-2026-11-20-000123",
              awb: "020-12345675",
              state: "DEP",
              timestamp: "2026-11-20T07:30:00Z",
              station: "FRA",
              flight: "LH8160",
            },
          ],
        },
        response: {
          202: { type: "object", properties: { events: { type: "array", items: ingestResult } } },
          400: problem,
          401: problem,
          403: problem,
        },
      },
    },
    async (request, reply) => {
      requireScope(await authenticate(request), "events:write");
      const events = parseMilestones(request.body, { enforceCheckDigit, now: new Date() });
      const results = await milestones.ingest(events);
      return reply.code(202).send({ events: results });
    },
  );

  app.get<{ Querystring: { awb?: string } }>(
    `${base}/events`,
    {
      schema: {
        tags: ["milestones"],
        security,
        summary: "The stored milestones of an AWB, in the order they happened (scope events:read or subscriptions)",
        querystring: { type: "object", properties: { awb: { type: "string" } } },
      },
    },
    async (request) => {
      requireScope(await authenticate(request), "events:read", "subscriptions");
      return (await milestones.history(request.query.awb)).map(milestoneView);
    },
  );
}
