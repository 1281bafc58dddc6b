import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../../errors";
import { API } from "../jsonld-context";
import { CONTENT_LANGUAGE, jsonLdContentType } from "../negotiation";
import { apiVersionOf, oneRecordCallerOf, sendCreated, sendJsonLd } from "../onerecord-http";
import { readEventListQuery } from "./event-query";
import type { EventList, EventsService } from "./events.service";
import type { ObjectService } from "../objects/objects.service";

type ObjectParams = { id: string };
type EventParams = { id: string; eventId: string };

/**
 * The logistics events of an object (the specification's Logistics Events page): the list (GET and
 * HEAD, with its filters), one event, and posting one. Events are immutable: no other method (the
 * plugin answers 405 with Allow).
 */
export function registerEventRoutes(
  scope: FastifyInstance,
  deps: { events: EventsService; objects: ObjectService },
): void {
  const { events, objects } = deps;
  const list = "/logistics-objects/:id/logistics-events";

  /** The list and when it last changed: with no events yet, when the object did (docs/ONE-RECORD.md). */
  const readList = async (
    request: FastifyRequest<{ Params: ObjectParams }>,
    headOnly: boolean,
  ): Promise<EventList & { lastModified: Date }> => {
    const query = readEventListQuery(request.query as Record<string, unknown>);
    const caller = oneRecordCallerOf(request);
    const answer = await events.list(caller, request.params.id, headOnly ? { ...query, limit: 0 } : query);
    if (answer.lastModified !== null) return { ...answer, lastModified: answer.lastModified };
    const object = await objects.read(caller, request.params.id);
    return { ...answer, lastModified: object.lastModified };
  };

  // Before GET, which would otherwise make its own HEAD that reads a whole page to send none of it.
  scope.head<{ Params: ObjectParams }>(list, async (request, reply) => {
    const answer = await readList(request, true);
    return listHeaders(reply, answer)
      .code(200)
      .header("content-type", jsonLdContentType(apiVersionOf(request)))
      .header("content-language", CONTENT_LANGUAGE)
      .send();
  });

  scope.get<{ Params: ObjectParams }>(list, async (request, reply) => {
    const answer = await readList(request, false);
    return sendJsonLd(listHeaders(reply, answer), 200, answer.body);
  });

  scope.get<{ Params: EventParams }>(`${list}/:eventId`, async (request, reply) => {
    const { id, eventId } = request.params;
    const event = await events.get(oneRecordCallerOf(request), id, eventId);
    reply.header("last-modified", event.lastModified.toUTCString()).header("type", event.type);
    return sendJsonLd(reply, 200, event.body);
  });

  scope.post<{ Params: ObjectParams }>(list, async (request, reply) => {
    if (request.body === undefined)
      throw new AppError("INVALID_JSON_LD", "The body must be a logistics event in JSON-LD (application/ld+json)");
    const created = await events.post(oneRecordCallerOf(request), request.params.id, request.body);
    return sendCreated(reply, created.location, created.type);
  });
}

/** The list's headers: typed like every other answer (an api:Collection), its Last-Modified and ETag. */
function listHeaders(reply: FastifyReply, list: EventList & { lastModified: Date }): FastifyReply {
  return reply
    .header("type", `${API}Collection`)
    .header("last-modified", list.lastModified.toUTCString())
    .header("etag", list.etag);
}
