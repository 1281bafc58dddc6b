import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Principal, requireScope } from "../clients/client.service";
import type { DeliveryService } from "../delivery/delivery.service";
import type { MilestoneService } from "./milestone.service";
import { parseMilestones } from "./milestone.validate";
import { milestoneView } from "./milestone.view";

const security = [{ bearer: [] }];
const problem = { $ref: "Problem#" };

export function registerMilestoneRoutes(
  app: FastifyInstance,
  deps: { milestones: MilestoneService; deliveries: DeliveryService; carrier: string; enforceCheckDigit: boolean; authenticate: (request: FastifyRequest) => Promise<Principal | null> },
): void {
  const { milestones, deliveries, carrier, enforceCheckDigit, authenticate } = deps;
  const base = `/${carrier}/handling/shipment`;

  app.post(`${base}/events`, {
    schema: {
      tags: ["milestones"], security, summary: "Ingest one milestone or up to 1,000 (scope events:write)",
      body: { description: "{ eventId?, awb, state, timestamp?, toaTimestamp?, station?, flight? } or an array of up to 1,000 of them" },
      response: { 202: { type: "object", properties: { events: { type: "array", items: { type: "object", properties: { eventId: { type: "string" }, duplicate: { type: "boolean" }, matchedSubscriptions: { type: "integer" } } } } } }, 400: problem, 401: problem, 403: problem },
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
    schema: { tags: ["deliveries"], security, summary: "A subscription's deliveries with their attempts, newest first" },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    const first = request.query.first === undefined ? 50 : Number(request.query.first);
    return deliveries.listForSubscription(principal, request.params.id, { status: request.query.status, first });
  });

  app.post<{ Params: { id: string }; Querystring: { from?: string; to?: string } }>(`${base}/subscribe/:id/redeliver`, {
    schema: { tags: ["deliveries"], security, summary: "Requeue every dead delivery of a subscription, optionally created in [from, to)" },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    return { requeued: await deliveries.redeliverDead(principal, request.params.id, request.query) };
  });

  app.post<{ Params: { deliveryId: string } }>(`${base}/deliveries/:deliveryId/redeliver`, {
    schema: { tags: ["deliveries"], security, summary: "Send one dead or delivered notification again (same webhook-id)" },
  }, async (request) => {
    const principal = requireScope(await authenticate(request), "subscriptions");
    return deliveries.redeliver(principal, request.params.deliveryId);
  });
}
