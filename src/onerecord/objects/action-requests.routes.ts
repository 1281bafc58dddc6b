import type { FastifyInstance, FastifyReply } from "fastify";
import { AppError } from "../../errors";
import type { ActionRequestHeaders, ActionRequestKind } from "../action-request-kinds";
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
  /** The other kinds of action requests (subscription requests, access delegations), asked after change requests. */
  readonly actionRequestKinds?: readonly ActionRequestKind[];
}

const CHANGE_REQUEST = `${API}ChangeRequest`;

/** Change requests as an ActionRequestKind: every well-formed id not held by another kind is looked up here last. */
function changeRequests(objects: ObjectService, uris: OneRecordUris): ActionRequestKind {
  const headers = (row: ActionRequestRow): ActionRequestHeaders => ({
    type: CHANGE_REQUEST,
    lastModified: row.decided_at ?? row.requested_at,
  });
  return {
    async read(caller, id, version) {
      const row = await objects.actionRequest(caller, id);
      return { ...headers(row), node: actionRequestNode(row, uris, version) };
    },
    decide: async (caller, id, status) => headers(await objects.decide(caller, id, status)),
    revoke: async (caller, id) => headers(await objects.revoke(caller, id)),
  };
}

/** Action requests of every kind: read, decided by the holder (PATCH ?status=), revoked (DELETE). */
export function registerActionRequestRoutes(
  scope: FastifyInstance,
  { objects, uris, actionRequestKinds = [] }: ActionRequestRouteDeps,
): void {
  // Change requests last: their lookup answers ACTION_REQUEST_NOT_FOUND for an id no kind holds.
  const kinds = [...actionRequestKinds, changeRequests(objects, uris)];
  async function first<T>(ask: (kind: ActionRequestKind) => Promise<T | undefined>): Promise<T> {
    for (const kind of kinds) {
      const answer = await ask(kind);
      if (answer !== undefined) return answer;
    }
    throw new AppError("INTERNAL", "no kind of action request answered");
  }
  const headersOf = (reply: FastifyReply, id: string, answer: ActionRequestHeaders) =>
    reply
      .header("location", uris.actionRequestUri(id))
      .header("type", answer.type)
      .header("last-modified", answer.lastModified.toUTCString());

  scope.get<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    const { id } = request.params;
    const caller = oneRecordCallerOf(request);
    const answer = await first((kind) => kind.read(caller, id, apiVersionOf(request)));
    const body = await compactJsonLd(answer.node);
    return sendJsonLd(headersOf(reply, id, answer), 200, body);
  });

  scope.patch<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    const { id } = request.params;
    const [status] = parseStatuses(queryOf(request).status) ?? [];
    const caller = oneRecordCallerOf(request);
    let answer: ActionRequestHeaders;
    if (status === "REQUEST_ACCEPTED" || status === "REQUEST_REJECTED")
      answer = await first((kind) => kind.decide(caller, id, status));
    else if (status === "REQUEST_REVOKED") answer = await first((kind) => kind.revoke(caller, id));
    else throw invalidQuery("status", "is REQUEST_ACCEPTED, REQUEST_REJECTED or REQUEST_REVOKED");
    return headersOf(reply, id, answer).code(204).send();
  });

  scope.delete<{ Params: { id: string } }>("/action-requests/:id", async (request, reply) => {
    const { id } = request.params;
    const caller = oneRecordCallerOf(request);
    await first((kind) => kind.revoke(caller, id));
    return reply.code(204).send();
  });
}
