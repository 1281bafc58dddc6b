import type { FastifyInstance } from "fastify";
import { requireClient } from "../clients/client-records";
import type { Principal } from "../clients/principal";
import type { Config } from "../config";
import { AppError } from "../errors";
import type { AuthFailureBudget } from "../http/auth-failures";
import { listeningUrl } from "../http/listening-url";
import type { RateLimiter } from "../http/rate-limit";
import { type AgentAuthentication, createOneRecordCallers } from "../onerecord/identity/caller";
import { createJwtVerifier } from "../onerecord/identity/jwt-verifier";
import { registerOneRecordRoutes } from "../onerecord/onerecord.routes";
import { createOneRecordUris } from "../onerecord/uris";
import { createObjectService } from "../onerecord/objects/objects.service";
import { createObjectStore } from "../onerecord/objects/objects.store";
import { createEventsService } from "../onerecord/events/events.service";
import { createEventStore } from "../onerecord/events/events.store";
import type { ActionRequestKind } from "../onerecord/action-request-kinds";
import { notificationEndpointOf } from "../onerecord/partners/notification-endpoint";
import { createSubscriptionService } from "../onerecord/subscriptions/subscriptions.service";
import { createSubscriptionStore } from "../onerecord/subscriptions/subscriptions.store";
import { registerSubscriptionRoutes } from "../onerecord/subscriptions/subscriptions.routes";
import { createDelegationService } from "../onerecord/delegations/delegations.service";
import { delegationRequests, delegationRoutes } from "../onerecord/delegations/delegations.routes";
import { queueOneRecordNotifications } from "../onerecord/notifications-out/queue";
import type { Core } from "./build-services";
import { mountOneRecordSubscriber } from "./mount-onerecord-subscriber";

/**
 * The ONE Record API (docs/ONE-RECORD.md) on `http`: its URIs start with ONE_RECORD_BASE_URL or, when
 * unset, this server's listening URL and base path (asked per request: known only once it listens).
 */
export async function mountOneRecord(
  http: FastifyInstance,
  config: Config,
  authenticateApiKey: (authorization: string | undefined, address: string) => Promise<Principal | null>,
  limits: { failures: AuthFailureBudget; limiter: RateLimiter },
  core: Pick<
    Core,
    | "database"
    | "services"
    | "metrics"
    | "callbackAgent"
    | "oneRecordNotifications"
    | "oneRecordTokens"
    | "oneRecordPartnerServers"
    | "tableUpkeep"
  >,
): Promise<void> {
  const { basePath, baseUrl, oidc } = config.oneRecord;
  const uris = createOneRecordUris(() => baseUrl ?? `${listeningUrl(http.server)}${basePath}`);
  // What queues ONE Record notifications (notifications-out/): ingestion's producers write these URIs too.
  const { producers } = core.oneRecordNotifications;
  core.oneRecordNotifications.base.use(() => uris.base());
  // With an OIDC issuer, access tokens spend the API keys' failure budget and rate limit.
  const agents: AgentAuthentication | undefined = oidc && {
    verify: createJwtVerifier(oidc),
    failures: limits.failures,
    takeRequest: (limitKey) => limits.limiter.take(limitKey),
    localIdOf: (uri) => uris.localIdOf(uri),
  };
  const callers = createOneRecordCallers({
    authenticateApiKey,
    organizationUri: (id) => uris.objectUri(id),
    ...(agents ? { agents } : {}),
  });
  const objects = createObjectService({
    store: createObjectStore(core.database.prisma),
    uris,
    stationOf: (code) => {
      const station = core.services.stations.isStation(code) ? core.services.stations.find(code) : null;
      return station ? { code: station.station.code, name: station.station.name } : undefined;
    },
    carrierName: config.oneRecord.organizationName,
    applyHolderChanges: config.oneRecord.applyHolderChanges,
    objectQuota: {
      name: "logistics_objects",
      what: "logistics objects",
      ...config.oneRecord.objectQuota,
      settings: { perDay: "ONE_RECORD_OBJECTS_PER_DAY", bytesPerDay: "ONE_RECORD_OBJECT_BYTES_PER_DAY" },
    },
    changeRequestQuota: {
      name: "change_requests",
      what: "change requests",
      ...config.oneRecord.changeRequestQuota,
      settings: {
        perDay: "ONE_RECORD_CHANGE_REQUESTS_PER_DAY",
        bytesPerDay: "ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY",
      },
    },
    notifications: producers,
    clientOf: (clientId) =>
      requireClient(core.database.prisma, clientId).then(
        ({ name, createdAt }) => ({ name, createdAt }),
        (error: unknown) => {
          if (error instanceof AppError && error.code === "CLIENT_NOT_FOUND") return undefined;
          throw error;
        },
      ),
  });
  const events = createEventsService({
    store: createEventStore(core.database.sql),
    uris,
    objectMeta: (id, reader) => objects.metaOf(id, reader),
    milestones: core.services.milestones,
    isStation: (code) => core.services.stations.isStation(code),
    enforceCheckDigit: core.services.enforceCheckDigit,
    transaction: (work) => core.database.prisma.$transaction((tx) => work(tx)),
    notifications: producers,
    eventQuota: {
      name: "logistics_events",
      what: "logistics events",
      ...config.oneRecord.eventQuota,
      settings: { perDay: "ONE_RECORD_EVENTS_PER_DAY", bytesPerDay: "ONE_RECORD_EVENT_BYTES_PER_DAY" },
    },
  });
  // Part 2's action request kinds and resources: each part adds its own to these two lists.
  const actionRequestKinds: ActionRequestKind[] = [];
  const moreRoutes: Array<(scope: FastifyInstance) => void> = [];

  // Subscriber-initiated subscriptions: POST /subscriptions and their SubscriptionRequests.
  const subscriptions = createSubscriptionService({
    store: createSubscriptionStore(core.database.prisma),
    uris,
    objectMeta: (id) => objects.metaOf(id),
    endpointOf: (organizationId) => notificationEndpointOf(core.database.prisma, organizationId),
    thirdPartySubscribers: config.oneRecord.thirdPartySubscribers,
    isPartnerServer: async (url) => (await core.oneRecordPartnerServers.partnerOf(url)) !== undefined,
    allowPrivateAddresses: config.allowPrivateCallbacks,
  });
  actionRequestKinds.push(subscriptions.actionRequests);
  moreRoutes.push((scope) => registerSubscriptionRoutes(scope, { uris, subscriptions }));

  // Access delegations: POST /access-delegations and their AccessDelegationRequests.
  const delegations = createDelegationService({
    prisma: core.database.prisma,
    uris,
    quota: config.oneRecord.delegationQuota,
    objectMeta: (id, reader) => objects.metaOf(id, reader),
    endpointOf: (tx, organizationId) => notificationEndpointOf(tx, organizationId),
    queueNotifications: (tx, notifications) => queueOneRecordNotifications(tx, notifications),
  });
  actionRequestKinds.push(delegationRequests(delegations, uris));
  moreRoutes.push(delegationRoutes(delegations, uris));

  // The gateway as a subscriber: POST /notifications, GET /subscriptions, the publisher-initiated proposals.
  moreRoutes.push(mountOneRecordSubscriber(http, core, uris, core.oneRecordTokens, config.oneRecord));

  await registerOneRecordRoutes(http, { basePath, uris, callers, objects, events, actionRequestKinds, moreRoutes });
}
