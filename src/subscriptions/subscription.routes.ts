import type { FastifyInstance, FastifyRequest } from "fastify";
import { type Principal, requireScope } from "../clients/client.service";
import type { Scope } from "../clients/credentials";
import { validationError } from "../errors";
import type { SubscriptionService } from "./subscription.service";
import { readSubscriptionBody } from "./subscription.validate";
import { subscriptionView } from "./subscription.view";

const tags: readonly string[] = ["subscriptions"];
const problem = { $ref: "Problem#" };
const subscription = {
  type: "object",
  properties: {
    subscriptionId: { type: "string", format: "uuid" },
    AWB: { type: "string", example: "020-12345675" },
    Callback: { type: "string" },
    States: { type: "string", example: "DEP,ARR,TOA" },
  },
} as const;
const body = {
  type: "object",
  description: "Either spelling of each field: awb/AWB, callback/Callback, states/States.",
  properties: {
    awb: { type: "string", example: "020-12345675" },
    callback: { type: "string", example: "https://forwarder.example/hooks/awb" },
    states: {
      description:
        'Status codes (RCS MAN DEP ARR RCF NFD DLV DDL RCT TFD DIS TOA) separated by commas or spaces, or "*" for every code; or an array of codes.',
      oneOf: [
        { type: "string", example: "DEP, ARR, TOA" },
        { type: "array", items: { type: "string" }, example: ["DEP", "ARR", "TOA"] },
      ],
    },
  },
} as const;
const idParam = { type: "object", properties: { id: { type: "string", format: "uuid" } } } as const;
const security = [{ bearer: [] }];

/** REST routes 4.1–4.4 and the list route (CONTRACT §2), scope `subscriptions`. */
export function registerSubscriptionRoutes(
  app: FastifyInstance,
  {
    subscriptions,
    carrier,
    authenticate,
  }: {
    subscriptions: SubscriptionService;
    carrier: string;
    authenticate: (request: FastifyRequest) => Promise<Principal | null>;
  },
): void {
  const base = `/${carrier}/handling/shipment/subscribe`;
  const caller = async (request: FastifyRequest, scope: Scope = "subscriptions") =>
    requireScope(await authenticate(request), scope);

  app.post(
    base,
    {
      schema: {
        tags,
        security,
        summary: "Subscribe to an AWB's milestones",
        body,
        response: {
          201: subscription,
          400: problem,
          401: problem,
          403: problem,
          409: problem,
          422: problem,
          424: problem,
        },
      },
    },
    async (request, reply) => {
      const principal = await caller(request);
      const { input } = readSubscriptionBody(request.body, { withId: false });
      const created = await subscriptions.create(principal, input);
      return reply.code(201).header("location", `${base}/${created.id}`).send(subscriptionView(created));
    },
  );

  app.get<{ Querystring: Record<string, unknown> }>(
    base,
    {
      schema: {
        tags,
        security,
        summary: "The caller's subscriptions, optionally filtered",
        querystring: { type: "object", properties: { awb: { type: "string" }, callback: { type: "string" } } },
        response: { 200: { type: "array", items: subscription }, 400: problem, 401: problem },
      },
    },
    async (request) => {
      const principal = await caller(request);
      const { awb, callback, ...rest } = request.query;
      const unknown = Object.keys(rest);
      if (unknown.length > 0)
        throw validationError(
          unknown.map((field) => ({ field, message: "is not a known query parameter (awb, callback)" })),
        );
      const items = [];
      let after: string | null = null;
      // The REST route answers the whole filtered list (as the contract's array); GraphQL pages it.
      do {
        const page: Awaited<ReturnType<SubscriptionService["list"]>> = await subscriptions.list(principal, {
          awb,
          callback,
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
        security,
        summary: "One subscription",
        params: idParam,
        response: { 200: subscription, 400: problem, 401: problem, 404: problem },
      },
    },
    async (request) => {
      const principal = await caller(request);
      return subscriptionView(await subscriptions.get(principal, request.params.id));
    },
  );

  app.put<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        security,
        summary: "Replace a subscription",
        params: idParam,
        body,
        response: { 200: subscription, 400: problem, 404: problem, 409: problem, 422: problem, 424: problem },
      },
    },
    async (request) => {
      const principal = await caller(request);
      const { input, subscriptionId } = readSubscriptionBody(request.body, { withId: true });
      if (subscriptionId !== undefined && subscriptionId !== request.params.id) {
        throw validationError([
          { field: "subscriptionId", message: `differs from the id in the path (${request.params.id})` },
        ]);
      }
      return subscriptionView(await subscriptions.update(principal, request.params.id, input));
    },
  );

  app.delete<{ Params: { id: string } }>(
    `${base}/:id`,
    {
      schema: {
        tags,
        security,
        summary: "Delete a subscription",
        params: idParam,
        response: { 204: { type: "null" }, 400: problem, 404: problem },
      },
    },
    async (request, reply) => {
      const principal = await caller(request);
      await subscriptions.remove(principal, request.params.id);
      return reply.code(204).send();
    },
  );
}
