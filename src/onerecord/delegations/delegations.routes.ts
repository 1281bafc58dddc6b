import type { FastifyInstance } from "fastify";
import type { ActionRequestKind } from "../action-request-kinds";
import { readJsonLdObject } from "../jsonld-codec";
import { jsonLdBodyOf, oneRecordCallerOf, sendCreated } from "../onerecord-http";
import type { OneRecordUris } from "../uris";
import { readAccessDelegation } from "./access-delegation";
import { ACCESS_DELEGATION_REQUEST, delegationRequestNode } from "./delegation.view";
import type { DelegationService } from "./delegations.service";

/**
 * `POST {base}/access-delegations`: any authenticated caller asks; the answer is 201 with the
 * AccessDelegationRequest's Location and Type whatever the holder's policy decided (its status says).
 */
export function delegationRoutes(delegations: DelegationService, uris: OneRecordUris) {
  return (scope: FastifyInstance): void => {
    scope.post("/access-delegations", async (request, reply) => {
      const caller = oneRecordCallerOf(request);
      const root = await readJsonLdObject(jsonLdBodyOf(request));
      const delegation = readAccessDelegation(root, uris, new Date());
      const row = await delegations.request(caller, delegation, root);
      return sendCreated(reply, uris.actionRequestUri(row.id), ACCESS_DELEGATION_REQUEST);
    });
  };
}

/** AccessDelegationRequests among the action requests (`/action-requests/{id}`). */
export function delegationRequests(delegations: DelegationService, uris: OneRecordUris): ActionRequestKind {
  const headers = (row: { decided_at: Date | null; requested_at: Date }) => ({
    type: ACCESS_DELEGATION_REQUEST,
    lastModified: row.decided_at ?? row.requested_at,
  });
  return {
    async read(caller, id, version) {
      const row = await delegations.read(caller, id);
      return row && { ...headers(row), node: delegationRequestNode(row, uris, version) };
    },
    async decide(caller, id) {
      const row = await delegations.decide(caller, id);
      return row && headers(row);
    },
    async revoke(caller, id) {
      const row = await delegations.revoke(caller, id);
      return row && headers(row);
    },
  };
}
