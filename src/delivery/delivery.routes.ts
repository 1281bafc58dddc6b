import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Principal, requireScope } from "../clients/client.service";
import type { DeliveryService } from "./delivery.service";

const security = [{ bearer: [] }];
const problem = { $ref: "Problem#" };
const subscriptionIdParam = {
  type: "object",
  required: ["id"],
  properties: { id: { type: "string", format: "uuid", description: "The subscription's id" } },
};

/** A subscription's deliveries and their redelivery (scope `subscriptions`); CONTRACT §7. */
export function registerDeliveryRoutes(
  app: FastifyInstance,
  deps: {
    deliveries: DeliveryService;
    carrier: string;
    authenticate: (request: FastifyRequest) => Promise<Principal | null>;
  },
): void {
  const { deliveries, carrier, authenticate } = deps;
  const base = `/${carrier}/handling/shipment`;

  app.get<{ Params: { id: string }; Querystring: { status?: string; first?: string } }>(
    `${base}/subscribe/:id/deliveries`,
    {
      schema: {
        tags: ["deliveries"],
        security,
        summary: "A subscription's deliveries with their attempts, newest first",
        params: subscriptionIdParam,
        querystring: {
          type: "object",
          properties: {
            status: { type: "string", enum: ["PENDING", "DELIVERED", "DEAD"] },
            first: { type: "integer", minimum: 1, maximum: 200, default: 50 },
          },
        },
      },
    },
    async (request) => {
      const principal = requireScope(await authenticate(request), "subscriptions");
      const first = request.query.first === undefined ? 50 : Number(request.query.first);
      return deliveries.listForSubscription(principal, request.params.id, { status: request.query.status, first });
    },
  );

  app.post<{ Params: { id: string }; Querystring: { from?: string; to?: string } }>(
    `${base}/subscribe/:id/redeliver`,
    {
      schema: {
        tags: ["deliveries"],
        security,
        summary: "Requeue every dead delivery of a subscription, optionally created in [from, to)",
        params: subscriptionIdParam,
        querystring: {
          type: "object",
          properties: {
            from: { type: "string", format: "date-time", description: "Created at or after" },
            to: { type: "string", format: "date-time", description: "Created before" },
          },
        },
        response: {
          200: { type: "object", properties: { requeued: { type: "integer" } } },
          401: problem,
          403: problem,
          404: problem,
        },
      },
    },
    async (request) => {
      const principal = requireScope(await authenticate(request), "subscriptions");
      return { requeued: await deliveries.redeliverDead(principal, request.params.id, request.query) };
    },
  );

  app.post<{ Params: { deliveryId: string } }>(
    `${base}/deliveries/:deliveryId/redeliver`,
    {
      schema: {
        tags: ["deliveries"],
        security,
        summary: "Send one dead or delivered notification again (same webhook-id)",
        params: {
          type: "object",
          required: ["deliveryId"],
          properties: {
            deliveryId: { type: "string", format: "uuid", description: "The delivery's id (its webhook-id)" },
          },
        },
        response: { 401: problem, 403: problem, 404: problem },
      },
    },
    async (request) => {
      const principal = requireScope(await authenticate(request), "subscriptions");
      return deliveries.redeliver(principal, request.params.deliveryId);
    },
  );
}
