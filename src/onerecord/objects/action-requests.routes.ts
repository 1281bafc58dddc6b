import type { FastifyInstance, FastifyReply } from "fastify";
import { compactJsonLd } from "../jsonld-codec";
import { API } from "../jsonld-context";
import { apiVersionOf, oneRecordCallerOf, sendJsonLd } from "../onerecord-http";
import { invalidQuery, parseStatuses, queryOf } from "../query";
import type { OneRecordUris } from "../uris";
import { actionRequestNode } from "./action-request.view";
import type { ObjectService } from "./objects.service";
import type { ActionRequestRow } from "./objects.store";

interface ActionRequestRouteDeps {
  readonly objects: ObjectService;
  readonly uris: OneRecordUris;
}

const CHANGE_REQUEST = `${API}ChangeRequest`;

/** Action requests: read, decided by the holder (PATCH ?status=), revoked (DELETE). */
export function registerActionRequestRoutes(scope: FastifyInstance, { objects, uris }: ActionRequestRouteDeps): void {
  const headersOf = (reply: FastifyReply, row: ActionRequestRow) =>
    reply
      .header("location", uris.actionRequestUri(row.id))
      .header("type", CHANGE_REQUEST)
      .header("last-modified", (row.decided_at ?? row.requested_at).toUTCString());

  scope.get<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    const row = await objects.actionRequest(oneRecordCallerOf(request), request.params.id);
    const body = await compactJsonLd(actionRequestNode(row, uris, apiVersionOf(request)));
    return sendJsonLd(headersOf(reply, row), 200, body);
  });

  scope.patch<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    const [status] = parseStatuses(queryOf(request).status) ?? [];
    const caller = oneRecordCallerOf(request);
    let row: ActionRequestRow;
    if (status === "REQUEST_ACCEPTED" || status === "REQUEST_REJECTED")
      row = await objects.decide(caller, request.params.id, status);
    else if (status === "REQUEST_REVOKED") row = await objects.revoke(caller, request.params.id);
    else throw invalidQuery("status", "is REQUEST_ACCEPTED, REQUEST_REJECTED or REQUEST_REVOKED");
    return headersOf(reply, row).code(204).send();
  });

  scope.delete<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    await objects.revoke(oneRecordCallerOf(request), request.params.id);
    return reply.code(204).send();
  });
}
