import type { NodeObject } from "./jsonld-tree";
import type { OneRecordCaller } from "./identity/caller";
import type { ApiVersion } from "./negotiation";

/**
 * One kind of ONE Record action request (ChangeRequest, SubscriptionRequest, AccessDelegationRequest):
 * how `/action-requests/{id}` reads, decides and revokes the requests it holds. The routes ask each
 * kind in turn; ids are UUIDs made by this server, so at most one kind holds any id.
 */
export interface ActionRequestKind {
  /**
   * The request as expanded JSON-LD (for the routes to compact), when this kind holds `id`; undefined
   * when it does not. Throws ACCESS_DENIED when it holds it but the caller may not read it.
   */
  read(caller: OneRecordCaller, id: string, version: ApiVersion): Promise<ActionRequestAnswer | undefined>;
  /**
   * The holder's decision (PATCH ?status=REQUEST_ACCEPTED|REQUEST_REJECTED); undefined when this kind
   * does not hold `id`. A kind decided on arrival throws ACTION_REQUEST_DECIDED or ACCESS_DENIED.
   */
  decide(
    caller: OneRecordCaller,
    id: string,
    status: "REQUEST_ACCEPTED" | "REQUEST_REJECTED",
  ): Promise<ActionRequestHeaders | undefined>;
  /** Withdraws it (DELETE, or PATCH ?status=REQUEST_REVOKED); undefined when this kind does not hold `id`. */
  revoke(caller: OneRecordCaller, id: string): Promise<ActionRequestHeaders | undefined>;
}

/** What the answer's headers say of an action request. */
export interface ActionRequestHeaders {
  /** The api: class IRI (the Type header). */
  readonly type: string;
  /** When its status last changed (Last-Modified). */
  readonly lastModified: Date;
}

export interface ActionRequestAnswer extends ActionRequestHeaders {
  readonly node: NodeObject;
}
