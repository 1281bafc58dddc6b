import type { FastifyInstance, FastifyRequest } from "fastify";
import { UUID_PATTERN } from "../domain/ids";
import { validationError } from "../errors";
import { callerOf } from "../http/route-access";
import { addSchemas, ALWAYS, DATABASE, KEYED, problems, ref, WITH_BODY } from "../http/schema";
import {
  DELIVERY_MESSAGES,
  deliveryIdParams,
  deliverySchema,
  listQuery,
  redeliverQuery,
  subscriptionIdParams,
} from "./delivery.schemas";
import type { DeliveryService } from "./delivery.service";

const SUBSCRIPTION_NOT_FOUND = { 404: "No subscription of this client has the id (SUBSCRIPTION_NOT_FOUND)" };

type ListRequest = FastifyRequest<{ Params: { id: string }; Querystring: { status?: string; first?: number } }>;
type RedeliverRequest = FastifyRequest<{ Params: { id: string }; Querystring: { from?: unknown; to?: unknown } }>;

/** A subscription's deliveries and their redelivery (scope `subscriptions`); CONTRACT §7. */
export function registerDeliveryRoutes(
  app: FastifyInstance,
  deps: { deliveries: DeliveryService; carrier: string },
): void {
  const { deliveries, carrier } = deps;
  const base = `/${carrier}/handling/shipment`;
  addSchemas(app, deliverySchema);

  const list = (request: FastifyRequest) => {
    const { params, query } = request as ListRequest;
    const { status, first } = query;
    return deliveries.listForSubscription(callerOf(request), params.id, {
      status,
      first: first === undefined ? 50 : Number(first),
    });
  };

  app.get(
    `${base}/subscribe/:id/deliveries`,
    {
      schema: {
        tags: ["deliveries"],
        operationId: "listDeliveries",
        summary: "A subscription's deliveries with their attempts, newest first",
        params: subscriptionIdParams,
        querystring: listQuery,
        response: {
          200: { description: "The deliveries", type: "array", items: ref("Delivery") },
          ...problems([400, ...KEYED, 404, ...ALWAYS, ...DATABASE], SUBSCRIPTION_NOT_FOUND),
        },
      },
      // The service checks the id, then that the subscription is the caller's, then the query, and
      // only then reads the deliveries: asking it says why a request was refused, in that order.
      config: { scope: "subscriptions", explainInvalid: list },
    },
    list,
  );

  app.post(
    `${base}/subscribe/:id/redeliver`,
    {
      schema: {
        tags: ["deliveries"],
        operationId: "redeliverDeadDeliveries",
        summary: "Requeue every dead delivery of a subscription, optionally created in [from, to)",
        params: subscriptionIdParams,
        querystring: redeliverQuery,
        response: {
          200: {
            description: "How many dead deliveries were requeued",
            type: "object",
            required: ["requeued"],
            properties: { requeued: { type: "integer" } },
          },
          ...problems([...WITH_BODY, ...KEYED, 404, ...ALWAYS, ...DATABASE], SUBSCRIPTION_NOT_FOUND),
        },
      },
      config: {
        scope: "subscriptions",
        // As redeliverDead checks, without its write: the id and the subscription's owner (a read of
        // one delivery), then from and to (refused by the schema only when given twice).
        explainInvalid: async (request) => {
          const { params, query } = request as RedeliverRequest;
          await deliveries.listForSubscription(callerOf(request), params.id, { first: 1 });
          for (const field of ["from", "to"] as const)
            if (typeof query[field] !== "string" && query[field] !== undefined)
              throw validationError([{ field, message: DELIVERY_MESSAGES.instant }]);
        },
      },
    },
    async (request) => {
      const { params, query } = request as RedeliverRequest;
      return { requeued: await deliveries.redeliverDead(callerOf(request), params.id, query) };
    },
  );

  app.post(
    `${base}/deliveries/:deliveryId/redeliver`,
    {
      schema: {
        tags: ["deliveries"],
        operationId: "redeliverDelivery",
        summary: "Send one dead or delivered notification again (same webhook-id)",
        params: deliveryIdParams,
        response: {
          200: { description: "The delivery, requeued", ...ref("Delivery") },
          ...problems([...WITH_BODY, ...KEYED, 404, ...ALWAYS, ...DATABASE], {
            404: "No delivery of this client has the id (DELIVERY_NOT_FOUND)",
          }),
        },
      },
      config: {
        scope: "subscriptions",
        explainInvalid: (request) => {
          const { deliveryId } = request.params as { deliveryId?: unknown };
          if (typeof deliveryId !== "string" || !UUID_PATTERN.test(deliveryId))
            throw validationError([{ field: "deliveryId", message: DELIVERY_MESSAGES.deliveryId }]);
        },
      },
    },
    async (request) => deliveries.redeliver(callerOf(request), (request.params as { deliveryId: string }).deliveryId),
  );
}
