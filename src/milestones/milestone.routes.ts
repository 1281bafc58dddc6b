import type { FastifyInstance, FastifyRequest } from "fastify";
import { callerOf } from "../http/route-access";
import { addSchemas, ALWAYS, DATABASE, KEYED, problems, ref, WITH_BODY } from "../http/schema";
import { carrierStatusSchema, historyQuery, ingestAnswer, ingestBody, milestoneSchema } from "./milestone.schemas";
import { carrierStatusView } from "./carrier-status.view";
import type { MilestoneService } from "./milestone.service";
import { parseMilestones } from "./milestone.validate";
import { carrierFormatOf, type MessageContents, readCarrierMessage } from "../ingestion/carrier-ingest";
import { milestoneView } from "./milestone.view";
import { ingestAnswerView } from "./ingest-answer.view";

export async function registerMilestoneRoutes(
  app: FastifyInstance,
  deps: {
    milestones: MilestoneService;
    carrier: string;
    enforceCheckDigit: boolean;
    /** A station's IANA time zone, for carrier messages that give local times only. */
    timeZoneOf: (station: string) => string | null;
    /** Whether a code is one of the carrier's stations. */
    isStation: (code: string) => boolean;
  },
): Promise<void> {
  const { milestones, carrier, enforceCheckDigit, timeZoneOf, isStation } = deps;
  const base = `/${carrier}/handling/shipment`;
  addSchemas(app, milestoneSchema, carrierStatusSchema);

  /** JSON milestones, or a carrier message (FSU as text/plain, XFSU as XML) read into the same. */
  const readEvents = (request: FastifyRequest): MessageContents => {
    const now = new Date();
    const format = carrierFormatOf(request.headers["content-type"]);
    if (format && typeof request.body === "string")
      return readCarrierMessage(format, request.body, { enforceCheckDigit, now, timeZoneOf, isStation });
    return { events: parseMilestones(request.body, { enforceCheckDigit, now, isStation }), statuses: [] };
  };
  const awbOf = (request: FastifyRequest) => (request.query as { awb?: unknown }).awb;
  const readHistory = (request: FastifyRequest) => milestones.history(awbOf(request));
  const readCarrierStatuses = (request: FastifyRequest) => milestones.carrierStatuses(awbOf(request));

  // A scope of its own, so that only this route reads XML bodies (as text, for the XFSU parser).
  await app.register(async (scope) => {
    scope.addContentTypeParser(["application/xml", "text/xml"], { parseAs: "string" }, (_request, body, done) =>
      done(null, body),
    );
    const carrierMessage = { type: "string", description: "The message as sent" } as const;
    scope.post(
      `${base}/events`,
      {
        schema: {
          tags: ["milestones"],
          operationId: "ingestMilestones",
          summary:
            "Ingest one milestone or up to 1,000 (scope events:write): JSON, or Cargo-IMP FSU (text/plain) or Cargo-XML XFSU (application/xml) messages",
          body: {
            content: {
              "application/json": { schema: ingestBody },
              "text/plain": { schema: { ...carrierMessage, description: "One or more Cargo-IMP FSU messages" } },
              "application/xml": { schema: { ...carrierMessage, description: "One Cargo-XML XFSU StatusMessage" } },
              "text/xml": { schema: { ...carrierMessage, description: "One Cargo-XML XFSU StatusMessage" } },
            },
          },
          response: { 202: ingestAnswer, ...problems([...WITH_BODY, ...KEYED, ...ALWAYS, ...DATABASE]) },
        },
        config: { scope: "events:write", explainInvalid: readEvents },
      },
      async (request, reply) => {
        const contents = readEvents(request);
        const results = await milestones.ingest(contents.events, new Date(), contents.statuses, {
          clientId: callerOf(request).clientId,
        });
        return reply.code(202).send(ingestAnswerView(results, contents, enforceCheckDigit ? "enforce" : "off"));
      },
    );
  });

  app.get(
    `${base}/events`,
    {
      schema: {
        tags: ["milestones"],
        operationId: "listMilestones",
        summary: "The stored milestones of an AWB, in the order they happened (scope events:read or subscriptions)",
        querystring: historyQuery,
        response: {
          200: { description: "At most 1,000 milestones", type: "array", items: ref("Milestone") },
          ...problems([400, ...KEYED, ...ALWAYS, ...DATABASE], { 400: "awb is missing or not an AWB" }),
        },
      },
      // Refused only for a missing or malformed awb, which the service says before it reads anything.
      config: { scope: ["events:read", "subscriptions"], explainInvalid: readHistory },
    },
    async (request) => (await readHistory(request)).map(milestoneView),
  );

  app.get(
    `${base}/carrier-statuses`,
    {
      schema: {
        tags: ["milestones"],
        operationId: "listCarrierStatuses",
        summary:
          "Every status FSU and XFSU messages reported for an AWB, milestones or not (FOH, customs codes, OCI lines…), with pieces and weight, in the order they happened (scope events:read or subscriptions)",
        querystring: historyQuery,
        response: {
          200: { description: "At most 1,000 statuses", type: "array", items: ref("CarrierStatus") },
          ...problems([400, ...KEYED, ...ALWAYS, ...DATABASE], { 400: "awb is missing or not an AWB" }),
        },
      },
      config: { scope: ["events:read", "subscriptions"], explainInvalid: readCarrierStatuses },
    },
    async (request) => (await readCarrierStatuses(request)).map(carrierStatusView),
  );
}
