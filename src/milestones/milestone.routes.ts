import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Principal } from "../clients/client.service";
import { keyed } from "../http/auth";
import { addSchemas, ALWAYS, DATABASE, KEYED, problems, ref, WITH_BODY } from "../http/schema";
import { historyQuery, ingestAnswer, ingestBody, milestoneSchema } from "./milestone.schemas";
import type { MilestoneService } from "./milestone.service";
import { parseMilestones } from "./milestone.validate";
import { milestoneView } from "./milestone.view";

const security = [{ bearer: [] }];

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
  addSchemas(app, milestoneSchema);

  const readEvents = (request: FastifyRequest) => parseMilestones(request.body, { enforceCheckDigit, now: new Date() });
  const readHistory = (request: FastifyRequest) => milestones.history((request.query as { awb?: unknown }).awb);

  app.post(
    `${base}/events`,
    {
      schema: {
        tags: ["milestones"],
        security,
        summary: "Ingest one milestone or up to 1,000 (scope events:write)",
        body: ingestBody,
        response: { 202: ingestAnswer, ...problems([...WITH_BODY, ...KEYED, ...ALWAYS, ...DATABASE]) },
      },
      ...keyed(authenticate, "events:write"),
      config: { explainInvalid: readEvents },
    },
    async (request, reply) => {
      const results = await milestones.ingest(readEvents(request));
      return reply.code(202).send({ events: results });
    },
  );

  app.get(
    `${base}/events`,
    {
      schema: {
        tags: ["milestones"],
        security,
        summary: "The stored milestones of an AWB, in the order they happened (scope events:read or subscriptions)",
        querystring: historyQuery,
        response: {
          200: { description: "At most 1,000 milestones", type: "array", items: ref("Milestone") },
          ...problems([400, ...KEYED, ...ALWAYS, ...DATABASE], { 400: "awb is missing or not an AWB" }),
        },
      },
      ...keyed(authenticate, "events:read", "subscriptions"),
      // Refused only for a missing or malformed awb, which the service says before it reads anything.
      config: { explainInvalid: readHistory },
    },
    async (request) => (await readHistory(request)).map(milestoneView),
  );
}
