import type { FastifyInstance, FastifyRequest } from "fastify";
import { validationError } from "../errors";
import { callerOf } from "../http/route-access";
import { addSchemas, ALWAYS, DATABASE, KEYED, problems, ref, WITH_BODY } from "../http/schema";
import { listQuery, subscriptionBody, subscriptionIdParams, subscriptionSchema } from "./subscription.schemas";
import { parseSubscriptionId, type SubscriptionService } from "./subscription.service";
import { readSubscriptionBody } from "./subscription.validate";
import { subscriptionView } from "./subscription.view";

const tags: readonly string[] = ["subscriptions"];
const CALLBACK_PROBLEMS = {
  403: "The API key lacks the scope (INSUFFICIENT_SCOPE), or the callback is outside the client's registered prefixes (CALLBACK_NOT_REGISTERED)",
  409: "The client already sends this AWB to this callback (SUBSCRIPTION_EXISTS, subscriptionId), or has reached its subscription limit (SUBSCRIPTION_LIMIT_REACHED, limit)",
} as const;
const NOT_FOUND = { 404: "No subscription of this client has the id (SUBSCRIPTION_NOT_FOUND)" } as const;

type ListQuery = { awb?: unknown; callback?: unknown };

/** REST routes 4.1–4.4 and the list route (CONTRACT §2), scope `subscriptions`. */
export function registerSubscriptionRoutes(
  app: FastifyInstance,
  { subscriptions, carrier }: { subscriptions: SubscriptionService; carrier: string },
): void {
  const base = `/${carrier}/handling/shipment/subscribe`;
  addSchemas(app, subscriptionSchema);
  const answer = { description: "The subscription", ...ref("Subscription") };

  // Each route's reading of its input, in the order its handler meets it; also what explains a
  // request the schema refused (the same messages as before validation moved into the schemas).
  const readCreate = (request: FastifyRequest) => {
    const { input } = readSubscriptionBody(request.body, { withId: false });
    subscriptions.validate(input);
    return input;
  };
  const readId = (request: FastifyRequest) => parseSubscriptionId((request.params as { id?: unknown }).id);
  const readUpdate = (request: FastifyRequest) => {
    const pathId = (request.params as { id?: unknown }).id;
    const { input, subscriptionId } = readSubscriptionBody(request.body, { withId: true });
    if (subscriptionId !== undefined && subscriptionId !== pathId) {
      throw validationError([
        { field: "subscriptionId", message: `differs from the id in the path (${String(pathId)})` },
      ]);
    }
    parseSubscriptionId(pathId);
    subscriptions.validate(input);
    return input;
  };
  const readListQuery = (request: FastifyRequest): ListQuery => {
    const { awb, callback, ...rest } = request.query as Record<string, unknown>;
    const unknown = Object.keys(rest);
    if (unknown.length > 0)
      throw validationError(
        unknown.map((field) => ({ field, message: "is not a known query parameter (awb, callback)" })),
      );
    return { awb, callback };
  };

  app.post(
    base,
    {
      schema: {
        tags,
        operationId: "createSubscription",
        summary: "Subscribe to an AWB's milestones",
        body: subscriptionBody({ withId: false }),
        response: {
          201: {
            ...answer,
            headers: { location: { type: "string", description: "The subscription's path" } },
          },
          ...problems([...WITH_BODY, ...KEYED, 409, 422, 424, ...ALWAYS, ...DATABASE], CALLBACK_PROBLEMS),
        },
      },
      config: { scope: "subscriptions", explainInvalid: readCreate },
    },
    async (request, reply) => {
      const created = await subscriptions.create(callerOf(request), readCreate(request));
      return reply.code(201).header("location", `${base}/${created.id}`).send(subscriptionView(created));
    },
  );

  app.get(
    base,
    {
      schema: {
        tags,
        operationId: "listSubscriptions",
        summary: "The caller's subscriptions, optionally filtered",
        querystring: listQuery,
        response: {
          200: { description: "Every matching subscription", type: "array", items: ref("Subscription") },
          ...problems([400, ...KEYED, ...ALWAYS, ...DATABASE], {
            400: "An unknown query parameter, or awb or callback malformed (VALIDATION_FAILED)",
          }),
        },
      },
      config: {
        scope: "subscriptions",
        // The service checks awb and callback before it reads anything.
        explainInvalid: (request) =>
          subscriptions.list(callerOf(request), { ...readListQuery(request), first: 1, after: null }),
      },
    },
    async (request) => {
      const principal = callerOf(request);
      const filter = readListQuery(request);
      const items = [];
      let after: string | null = null;
      // The REST route answers the whole filtered list (as the contract's array); GraphQL pages it.
      do {
        const page: Awaited<ReturnType<SubscriptionService["list"]>> = await subscriptions.list(principal, {
          ...filter,
          first: 200,
          after,
        });
        items.push(...page.items);
        after = page.nextCursor;
      } while (after);
      return items.map(subscriptionView);
    },
  );

  app.get<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        operationId: "getSubscription",
        summary: "One subscription",
        params: subscriptionIdParams,
        response: { 200: answer, ...problems([400, ...KEYED, 404, ...ALWAYS, ...DATABASE], NOT_FOUND) },
      },
      config: { scope: "subscriptions", explainInvalid: readId },
    },
    async (request) => subscriptionView(await subscriptions.get(callerOf(request), request.params.id)),
  );

  app.put<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        operationId: "replaceSubscription",
        summary: "Replace a subscription",
        params: subscriptionIdParams,
        body: subscriptionBody({ withId: true }),
        response: {
          200: answer,
          ...problems([...WITH_BODY, ...KEYED, 404, 409, 422, 424, ...ALWAYS, ...DATABASE], {
            ...CALLBACK_PROBLEMS,
            ...NOT_FOUND,
          }),
        },
      },
      config: { scope: "subscriptions", explainInvalid: readUpdate },
    },
    async (request) =>
      subscriptionView(await subscriptions.update(callerOf(request), request.params.id, readUpdate(request))),
  );

  app.delete<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        operationId: "deleteSubscription",
        summary: "Delete a subscription",
        params: subscriptionIdParams,
        response: {
          204: { description: "Deleted", type: "null" },
          ...problems([...WITH_BODY, ...KEYED, 404, ...ALWAYS, ...DATABASE], NOT_FOUND),
        },
      },
      config: { scope: "subscriptions", explainInvalid: readId },
    },
    async (request, reply) => {
      await subscriptions.remove(callerOf(request), request.params.id);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { id: string } }>(
    `${base}/:id/enable`,
    {
      schema: {
        tags,
        operationId: "enableSubscription",
        summary:
          "Enable a subscription that delivery disabled (every attempt failed for DELIVERY_DISABLE_AFTER_HOURS); its parked notifications are sent again",
        params: subscriptionIdParams,
        response: { 200: answer, ...problems([...KEYED, 400, 404, ...ALWAYS, ...DATABASE], NOT_FOUND) },
      },
      config: { scope: "subscriptions", explainInvalid: readId },
    },
    async (request) => subscriptionView(await subscriptions.enable(callerOf(request), request.params.id)),
  );
}
