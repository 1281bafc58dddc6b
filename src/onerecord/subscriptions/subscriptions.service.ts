import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import { originOf } from "../../delivery/notification";
import { AppError } from "../../errors";
import { checkAddress } from "../../outbound/address-policy";
import type { ActionRequestHeaders, ActionRequestKind } from "../action-request-kinds";
import { canRead, canWrite, type ObjectMeta } from "../identity/access-policy";
import type { OneRecordCaller } from "../identity/caller";
import { isOrganizationObject } from "../identity/organization-objects";
import {
  agentOrganizationId,
  CARRIER_ORGANIZATION_ID,
  clientIdOfOrganizationId,
  isForeignOrganization,
} from "../identity/organizations";
import { API, XSD } from "../jsonld-context";
import type { NodeObject } from "../jsonld-tree";
import type { RequestStatusName } from "../notifications-out/notification-body";
import { type OneRecordNotification, queueOneRecordNotifications } from "../notifications-out/queue";
import { derivedNotificationsUrlOf, heldEndpointOf } from "../partners/notification-endpoint";
import { awbOfObjectId, type OneRecordUris } from "../uris";
import { allowsJsonLd, readSubscription, type Subscription } from "./subscription";
import { statusSince, SUBSCRIPTION_REQUEST, subscriptionRequestNode } from "./subscription-request.view";
import type { SubscriptionRefusal, SubscriptionRequestRow, SubscriptionStore, Tx } from "./subscriptions.store";

/** Live subscriptions one subscriber that is no API client may hold (an API client: its max_subscriptions). */
export const MAX_ONE_RECORD_SUBSCRIPTIONS = 10_000;
/**
 * Live type subscriptions (LOGISTICS_OBJECT_TYPE) one subscriber may hold: each may match every AWB's
 * objects, so each milestone queues at most this many (plus one identifier subscription) per subscriber.
 */
export const MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS = 20;
/** Rejected SubscriptionRequests one requester may have stored in 24 hours; beyond, refused (429), nothing stored. */
export const MAX_REJECTED_SUBSCRIPTIONS_PER_DAY = 100;
/**
 * Third parties' SubscriptionRequests one requester may have waiting for the holder's decision at once;
 * beyond, refused (429), nothing stored.
 */
export const MAX_PENDING_SUBSCRIPTION_REQUESTS = 100;
/**
 * Live subscriptions for third parties that holders accepted, per requester: each names a server the
 * gateway sends to, so one requester cannot multiply them without bound.
 */
export const MAX_THIRD_PARTY_SUBSCRIPTIONS = 1_000;

export interface SubscriptionServiceDeps {
  readonly store: SubscriptionStore;
  readonly uris: OneRecordUris;
  /** What the access rules need of an object (objects.service.ts metaOf); undefined when there is none. */
  objectMeta(id: string): Promise<ObjectMeta | undefined>;
  /** Where an Organization's notifications go (partners/notification-endpoint.ts); undefined when unknown. */
  endpointOf(organizationId: string): Promise<string | undefined>;
  /** MAX_ONE_RECORD_SUBSCRIPTIONS unless given. */
  readonly maxSubscriptions?: number;
  /** MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS unless given. */
  readonly maxTypeSubscriptions?: number;
  /** MAX_REJECTED_SUBSCRIPTIONS_PER_DAY unless given. */
  readonly maxRejectedPerDay?: number;
  /** MAX_PENDING_SUBSCRIPTION_REQUESTS unless given. */
  readonly maxPendingPerRequester?: number;
  /** ONE_RECORD_THIRD_PARTY_SUBSCRIBERS: who may be named as subscriber besides the caller ("any" unless given). */
  readonly thirdPartySubscribers?: "any" | "registered" | "none";
  /** Whether a URL is on a registered partner's server (partners/partner-servers.ts). */
  isPartnerServer(url: string): Promise<boolean>;
  /** ALLOW_PRIVATE_CALLBACKS: whether a private address literal may be sent to. */
  readonly allowPrivateAddresses: boolean;
  /** MAX_THIRD_PARTY_SUBSCRIPTIONS unless given. */
  readonly maxThirdPartiesPerRequester?: number;
}

const term = (name: string) => `${API}${name}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Ids of the carrier's reference data (stations, Organizations, flights): never changed, nothing to notify. */
const REFERENCE_DATA = /^(location|organization|transport-movement)-/;

/**
 * Subscriber-initiated subscriptions (docs/ONE-RECORD.md "Subscriptions"): a POSTed api:Subscription
 * becomes a SubscriptionRequest decided on arrival by the holder's policy, and SubscriptionRequests are
 * an ActionRequestKind: read by their subscriber and the topic's holder, revoked by either.
 */
export function createSubscriptionService(deps: SubscriptionServiceDeps) {
  const { store, uris } = deps;
  const cap = deps.maxSubscriptions ?? MAX_ONE_RECORD_SUBSCRIPTIONS;
  const typeCap = deps.maxTypeSubscriptions ?? MAX_ONE_RECORD_TYPE_SUBSCRIPTIONS;
  const rejectedCap = deps.maxRejectedPerDay ?? MAX_REJECTED_SUBSCRIPTIONS_PER_DAY;
  const pendingCap = deps.maxPendingPerRequester ?? MAX_PENDING_SUBSCRIPTION_REQUESTS;
  const thirdParties = deps.thirdPartySubscribers ?? "any";
  const thirdPartyCap = deps.maxThirdPartiesPerRequester ?? MAX_THIRD_PARTY_SUBSCRIPTIONS;
  const unprocessable = (property: string, message: string) =>
    new AppError("SUBSCRIPTION_UNPROCESSABLE", `${property}: ${message}`, {
      errors: [{ field: term(property), message }],
    });

  /** The topic object, checked to exist here; undefined for a type topic. */
  async function topicObject(subscription: Subscription): Promise<ObjectMeta | undefined> {
    if (subscription.topicType === "LOGISTICS_OBJECT_TYPE") return undefined;
    const id = uris.localIdOf(subscription.topic);
    if (id === undefined)
      throw unprocessable(
        "hasTopic",
        `${subscription.topic} is not a logistics object of this server (${uris.base()})`,
      );
    if (REFERENCE_DATA.test(id))
      throw unprocessable("hasTopic", `${subscription.topic} is the carrier's reference data, which never changes`);
    const meta = await deps.objectMeta(id);
    if (meta === undefined) throw unprocessable("hasTopic", `there is no logistics object ${subscription.topic}`);
    return meta;
  }

  /**
   * Where a third party's notifications go: the server the operator registered for it; else, for an
   * Organization on another server, the Notifications endpoint its IRI names (sent no token); for an
   * Organization of this server, held until the operator registers its server. Refused as
   * ONE_RECORD_THIRD_PARTY_SUBSCRIBERS says, and for an id of this server that is no Organization.
   */
  async function thirdPartyEndpoint(subscriber: string, iri: string): Promise<string> {
    if (thirdParties === "none")
      throw unprocessable(
        "hasSubscriber",
        "this server takes subscriptions for the caller's own Organization only, not for third parties " +
          "(ONE_RECORD_THIRD_PARTY_SUBSCRIBERS=none)",
      );
    const registered = await deps.endpointOf(subscriber);
    if (registered !== undefined) return registered;
    if (thirdParties === "registered")
      throw unprocessable(
        "hasSubscriber",
        `no ONE Record server is registered here for ${iri}: this server takes third parties' subscriptions ` +
          "only for partners its operator registered (ONE_RECORD_THIRD_PARTY_SUBSCRIBERS=registered)",
      );
    if (isForeignOrganization(subscriber)) {
      const derived = derivedNotificationsUrlOf(iri);
      if (derived === undefined)
        throw unprocessable("hasSubscriber", `${iri} names no server to send notifications to: use its http(s) IRI`);
      // A registered partner's server gets that partner's tokens: never at a path a requester chose.
      if (await deps.isPartnerServer(derived))
        throw unprocessable(
          "hasSubscriber",
          `${derived} is on a server the operator registered for another Organization: the operator registers ` +
            `${iri} first (registerOneRecordPartner)`,
        );
      // An address written in the IRI is checked now; a name is checked as each send connects.
      const host = new URL(derived).hostname.replace(/^\[|\]$/g, "");
      const verdict = isIP(host) === 0 ? undefined : checkAddress(host, deps.allowPrivateAddresses);
      if (verdict !== undefined && !verdict.allowed)
        throw unprocessable("hasSubscriber", `${derived}: the address is not allowed (${verdict.reason})`);
      return derived;
    }
    const clientId = clientIdOfOrganizationId(subscriber);
    const known =
      clientId !== undefined
        ? await store.clientExists(clientId)
        : isOrganizationObject(await deps.objectMeta(subscriber));
    if (!known)
      throw unprocessable(
        "hasSubscriber",
        `${iri} is no Organization: name a client's, an Organization logistics object, or another server's`,
      );
    return heldEndpointOf(subscriber);
  }

  /** Whether notifications to the subscriber go to a server no operator registered (derived from its IRI). */
  async function isUnregisteredServer(subscriber: string): Promise<boolean> {
    return isForeignOrganization(subscriber) && (await deps.endpointOf(subscriber)) === undefined;
  }

  /** The holder of a request's topic: who may write the object, or for a class the carrier's systems. */
  async function isHolder(caller: OneRecordCaller, row: SubscriptionRequestRow): Promise<boolean> {
    if (!caller.scopes.has("objects:write")) return false;
    if (row.topic_type === "LOGISTICS_OBJECT_TYPE") return true;
    const meta = await deps.objectMeta(row.topic);
    return meta !== undefined && canWrite(caller, meta);
  }

  /**
   * The request's own: its subscriber or requester, and for one this server proposed also the
   * Organization the partner's answer named as subscriber (a URI of the partner's own server, checked when
   * recorded): the partner's server, calling with its own identity, reads and revokes it, as the
   * specification asks of a publisher.
   */
  function isOwn(caller: OneRecordCaller, row: SubscriptionRequestRow): boolean {
    if (caller.organizationId === row.subscriber || caller.organizationId === row.requested_by) return true;
    if (row.initiated_by !== "PUBLISHER") return false;
    const answered = row.subscription[term("hasSubscriber")];
    return (
      Array.isArray(answered) && (answered[0] as { "@id"?: unknown } | undefined)?.["@id"] === caller.organizationUri
    );
  }

  /** The request when this kind holds `id` and the caller may see it (its own, or the holder). */
  async function visible(caller: OneRecordCaller, id: string): Promise<SubscriptionRequestRow | undefined> {
    if (!UUID.test(id)) return undefined;
    const row = await store.read(id);
    if (row === undefined) return undefined;
    if (!isOwn(caller, row) && !(await isHolder(caller, row)))
      throw new AppError("ACCESS_DENIED", `You may not read ${uris.actionRequestUri(id)}`, {
        extensions: { resource: uris.actionRequestUri(id) },
      });
    return row;
  }

  const headers = (row: SubscriptionRequestRow): ActionRequestHeaders => ({
    type: SUBSCRIPTION_REQUEST,
    lastModified: statusSince(row),
  });

  /**
   * The SUBSCRIPTION_REQUEST_<status> notification of a request that asked for them
   * (notifyRequestStatusChange), to its subscriber's endpoint; none otherwise. Governed by no
   * subscription (subscriptionId null): a revocation's must go although the subscription takes no more.
   */
  async function statusNotification(
    row: Pick<
      SubscriptionRequestRow,
      "id" | "notify_status_change" | "endpoint" | "client_id" | "topic_type" | "topic"
    >,
    status: RequestStatusName,
    object?: ObjectMeta,
    governed = false,
  ): Promise<OneRecordNotification | undefined> {
    if (!row.notify_status_change) return undefined;
    const identifier = row.topic_type === "LOGISTICS_OBJECT_IDENTIFIER";
    const meta = identifier ? (object ?? (await deps.objectMeta(row.topic))) : undefined;
    return {
      to: { endpoint: row.endpoint, clientId: row.client_id, subscriptionId: governed ? row.id : null },
      content: {
        eventType: `SUBSCRIPTION_REQUEST_${status}`,
        ...(identifier ? { logisticsObject: uris.objectUri(row.topic) } : {}),
        ...(identifier ? (meta ? { logisticsObjectType: meta.type } : {}) : { logisticsObjectType: row.topic }),
        triggeredBy: uris.actionRequestUri(row.id),
      },
    };
  }
  const queue = async (tx: Tx, notification: OneRecordNotification | undefined) => {
    if (notification) await queueOneRecordNotifications(tx, [notification]);
  };

  const actionRequests: ActionRequestKind = {
    async read(caller, id, version) {
      const row = await visible(caller, id);
      return row && { ...headers(row), node: subscriptionRequestNode(row, uris, version) };
    },
    async decide(caller, id, status) {
      const row = await visible(caller, id);
      if (row === undefined) return undefined;
      if (!(await isHolder(caller, row)))
        throw new AppError("ACCESS_DENIED", "Only the holder of the topic decides on a subscription request", {
          extensions: { resource: uris.actionRequestUri(id) },
        });
      const decided = (now = row.status) =>
        new AppError(
          "ACTION_REQUEST_DECIDED",
          decidedOnArrival(row)
            ? `The subscription request was decided on arrival: it is ${now}, no longer pending`
            : `The subscription request is ${now}, no longer pending`,
          { extensions: { resource: uris.actionRequestUri(id) } },
        );
      if (row.status !== "REQUEST_PENDING") throw decided();
      const accept = status === "REQUEST_ACCEPTED";
      // A rejection is not told to a server no operator registered: notifications go there only for an
      // accepted subscription (partner-servers.ts targetOf).
      const unregisteredServer = await isUnregisteredServer(row.subscriber);
      // A partner registered on that server since the request: its tokens stay its own.
      if (accept && unregisteredServer && (await deps.isPartnerServer(row.endpoint)))
        throw unprocessable(
          "hasSubscriber",
          `${row.endpoint} is now on a server the operator registered for another Organization: the operator ` +
            `registers ${row.subscriber} first (registerOneRecordPartner)`,
        );
      // Where no operator registered the server, the acceptance goes under the subscription it tells
      // of: it is sent only while that is live, and ends with it.
      const notification =
        accept || !unregisteredServer
          ? await statusNotification(row, accept ? "ACCEPTED" : "REJECTED", undefined, unregisteredServer)
          : undefined;
      const outcome = await store.transaction(async (tx) => {
        const done = await store.decide(
          tx,
          { requester: row.requested_by, subscriber: row.subscriber },
          {
            id,
            status,
            decidedBy: caller.organizationId,
            reason: accept ? null : "The holder of the topic rejected the subscription",
            errorStatus: accept ? null : 403,
            thirdPartyCap,
          },
        );
        if ("row" in done) await queue(tx, notification);
        return done;
      });
      if ("row" in outcome) return headers(outcome.row);
      if (outcome.refusal === undefined) throw decided(outcome.status);
      throw refused(
        outcome.refusal,
        "REQUEST_ACCEPTED",
        {
          topicType: row.topic_type as Subscription["topicType"],
          topic: row.topic,
        },
        true,
      );
    },
    async revoke(caller, id) {
      const row = await visible(caller, id);
      if (row === undefined) return undefined;
      if (!isOwn(caller, row) && !(await isHolder(caller, row)))
        throw new AppError("ACCESS_DENIED", "Only the subscriber or the holder revokes a subscription request", {
          extensions: { resource: uris.actionRequestUri(id) },
        });
      const notRevocable = () =>
        new AppError(
          "ACTION_REQUEST_DECIDED",
          `The subscription request is ${row.status}: only a pending or accepted one is revoked`,
          { extensions: { resource: uris.actionRequestUri(id) } },
        );
      if (row.status !== "REQUEST_PENDING" && row.status !== "REQUEST_ACCEPTED") throw notRevocable();
      // Nothing is told to a server no operator registered once no accepted subscription stands for it.
      const notification = (await isUnregisteredServer(row.subscriber))
        ? undefined
        : await statusNotification(row, "REVOKED");
      const revoked = await store.transaction(async (tx) => {
        const done = await store.revoke(tx, id, caller.organizationId);
        if (done) await queue(tx, notification);
        return done;
      });
      if (!revoked) throw notRevocable();
      return headers(revoked);
    },
  };

  /** Why a bound of the insert refused a request (subscriptions.store.ts), nothing stored. */
  function refused(
    seen: SubscriptionRefusal,
    status: "REQUEST_ACCEPTED" | "REQUEST_REJECTED" | "REQUEST_PENDING",
    subscription: Pick<Subscription, "topicType" | "topic">,
    /** Told to the holder deciding a third party's request, not to the subscriber. */
    toHolder = false,
  ): AppError {
    if (status === "REQUEST_PENDING")
      return new AppError(
        "RATE_LIMITED",
        `${seen.pending} of your subscription requests for third parties wait for their holders' decision: this ` +
          `server keeps at most ${pendingCap} waiting per requester; revoke some, or wait for decisions`,
        { retryAfterSeconds: 3_600 },
      );
    if (status === "REQUEST_REJECTED")
      return new AppError(
        "RATE_LIMITED",
        `${seen.rejected_recently} of your subscription requests were rejected in the last 24 hours: this server ` +
          `stores at most ${rejectedCap} a day; ask for topics you may read`,
        { retryAfterSeconds: 3_600 },
      );
    if (seen.existing !== null) {
      const existing = uris.actionRequestUri(seen.existing);
      return new AppError(
        "SUBSCRIPTION_EXISTS",
        `${toHolder ? "Its subscriber already holds" : "You already hold"} the live subscription ${existing} to ` +
          `${subscription.topic}: a subscription does not change; revoke it and subscribe anew to change it`,
        { extensions: { resource: existing } },
      );
    }
    if (status === "REQUEST_ACCEPTED" && seen.third_parties >= thirdPartyCap)
      return new AppError(
        "SUBSCRIPTION_LIMIT_REACHED",
        `Its requester holds ${seen.third_parties} live subscriptions for third parties, the most this server ` +
          "takes from one requester: it revokes some first",
      );
    if (subscription.topicType === "LOGISTICS_OBJECT_TYPE" && seen.live_types >= typeCap)
      return new AppError(
        "SUBSCRIPTION_LIMIT_REACHED",
        `You hold ${seen.live_types} live subscriptions to Logistics Object types, the most this server takes: ` +
          "revoke some first",
      );
    return new AppError(
      "SUBSCRIPTION_LIMIT_REACHED",
      "You hold as many live ONE Record subscriptions as this server takes: revoke some first",
    );
  }

  return {
    actionRequests,

    /**
     * A POSTed api:Subscription, decided on arrival: accepted when the caller may read its topic (a
     * class: always; each notification is filtered by what the subscriber may read), else stored
     * rejected with the reason. What is not well formed (400) or cannot be taken (422; 409 beside a live
     * subscription of the subscriber to the same topic, or past a cap; 429 past the rejected requests a
     * day) is refused, and nothing is stored.
     */
    async subscribe(caller: OneRecordCaller, root: NodeObject): Promise<SubscriptionRequestRow> {
      const subscription = readSubscription(root);
      const subscriber = agentOrganizationId(subscription.subscriber, (uri) => uris.localIdOf(uri));
      const thirdParty = subscriber !== caller.organizationId;
      if (!allowsJsonLd(subscription.contentTypes))
        throw unprocessable("hasContentType", "this server sends notifications as application/ld+json only");
      if (subscription.expiresAt !== undefined && subscription.expiresAt.getTime() <= Date.now())
        throw unprocessable("expiresAt", `${subscription.expiresAt.toISOString()} has passed`);
      const object = await topicObject(subscription);
      const endpoint = thirdParty
        ? await thirdPartyEndpoint(subscriber, subscription.subscriber)
        : await deps.endpointOf(subscriber);
      if (endpoint === undefined)
        throw unprocessable(
          "hasSubscriber",
          "this server knows no ONE Record server of yours to send notifications to: the operator registers it " +
            "(npm run admin -- partner:add --server <your server URL> --client <your client id>, or --agent " +
            "<your logistics_agent_uri> for an access token; while the gateway runs, the GraphQL mutation " +
            "registerOneRecordPartner does the same; the token's URI alone names no server)",
        );
      // A third party's request waits for the topic's holder, who alone knows whether it should have
      // the notifications; the caller's own is decided on arrival by the holder's policy.
      const refusal =
        thirdParty || object === undefined || canRead(caller, object)
          ? undefined
          : `You may not read ${subscription.topic}: the holder's policy subscribes only those who may read the topic`;
      const status = thirdParty ? "REQUEST_PENDING" : refusal === undefined ? "REQUEST_ACCEPTED" : "REQUEST_REJECTED";
      const id = randomUUID();
      const localTopic = object?.id ?? subscription.topic;
      const notification = thirdParty
        ? undefined
        : await statusNotification(
            {
              id,
              notify_status_change: subscription.notifyStatusChange,
              endpoint,
              client_id: clientIdOfOrganizationId(subscriber) ?? null,
              topic_type: subscription.topicType,
              topic: localTopic,
            },
            refusal === undefined ? "ACCEPTED" : "REJECTED",
            object,
          );
      return store.transaction(async (tx) => {
        const written = await store.insert(tx, {
          id,
          status,
          initiatedBy: "SUBSCRIBER",
          requestedBy: caller.organizationId,
          decidedBy: thirdParty ? null : CARRIER_ORGANIZATION_ID,
          reason: refusal ?? null,
          errorStatus: refusal === undefined ? null : 403,
          subscription: storedSubscription(subscription, id),
          subscriber,
          topicType: subscription.topicType,
          topic: localTopic,
          awb: object === undefined ? null : (awbOfObjectId(object.id) ?? null),
          eventTypes: [...subscription.eventTypes],
          expiresAt: subscription.expiresAt ?? null,
          sendBody: subscription.sendBody,
          notifyStatusChange: subscription.notifyStatusChange,
          endpoint,
          origin: originOf(endpoint),
          clientId: clientIdOfOrganizationId(subscriber) ?? null,
          // An agent's scopes live in its tokens only: kept as they were, for notifications to be read by
          // them as an API client's are by its keys (subscription-matching-columns.ts READS_AWBS_BY_SCOPE).
          // Never a third party's: it reads what it is granted, not what its requester may.
          agentScopes: caller.agentUri === undefined || thirdParty ? null : [...caller.scopes].sort(),
          defaultCap: cap,
          typeCap,
          rejectedCap,
          pendingCap,
        });
        if ("refusal" in written) throw refused(written.refusal, status, subscription);
        await queue(tx, notification);
        return written.row;
      });
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;

/**
 * The api:Subscription as kept: every term typed as the API ontology says, whatever form the client
 * used; its own IRI kept, or else one named after the request. hasSubscriber and hasTopic are the
 * row's (subscriber, topic) and are written from them when answered. With no hasContentType it holds
 * the one notifications are sent in.
 */
function storedSubscription(subscription: Subscription, requestId: string): NodeObject {
  const literal = (value: string | boolean, type?: string) => [{ "@value": value, ...(type ? { "@type": type } : {}) }];
  return {
    "@id": subscription.id ?? `internal:${requestId}-subscription`,
    "@type": [term("Subscription")],
    [term("hasTopicType")]: [{ "@id": term(subscription.topicType) }],
    [term("includeSubscriptionEventType")]: subscription.eventTypes.map((name) => ({ "@id": term(name) })),
    [term("hasContentType")]: (subscription.contentTypes.length > 0
      ? subscription.contentTypes
      : ["application/ld+json"]
    ).map((type) => ({ "@value": type })),
    [term("sendLogisticsObjectBody")]: literal(subscription.sendBody),
    [term("notifyRequestStatusChange")]: literal(subscription.notifyStatusChange),
    ...(subscription.expiresAt === undefined
      ? {}
      : { [term("expiresAt")]: literal(subscription.expiresAt.toISOString(), `${XSD}dateTime`) }),
    ...(subscription.description === undefined ? {} : { [term("hasDescription")]: literal(subscription.description) }),
  };
}

/** A request its own subscriber made, decided on arrival by the holder's policy (never pending). */
function decidedOnArrival(row: SubscriptionRequestRow): boolean {
  return row.initiated_by === "SUBSCRIBER" && row.subscriber === row.requested_by;
}
