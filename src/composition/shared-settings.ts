import { createHash, createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Config } from "../config";
import type { SharedSettings } from "../db/instance-registry";

/** What a process does, which decides the settings it must share with the other instances. */
export interface InstanceRole {
  /** Serves the API (REST, GraphQL, websockets, the broker consumer). */
  readonly api: boolean;
  /** Runs a delivery worker. */
  readonly deliveryWorker: boolean;
  /** Runs retention (RETENTION_INTERVAL_MS above 0). */
  readonly retention: boolean;
}

export function gatewayRole(config: Config): InstanceRole {
  return { api: true, deliveryWorker: config.deliveryWorker, retention: config.retention.intervalMs > 0 };
}

/** `npm run worker`: delivery only. */
export const WORKER_ROLE: InstanceRole = { api: false, deliveryWorker: true, retention: false };

type Setting = SharedSettings[string];
type Reader = (config: Config, secretsKey: Buffer) => Setting;

const value = (text: string | number | boolean): Setting => ({ value: String(text) });

/**
 * The settings in which the instances on one database must agree, and which kind of process uses
 * each: a process compares only those it uses with those of the running instances that use them too
 * (a worker has no CARRIER_SEGMENT to compare). docs/DEPLOYMENT.md "What every instance must share"
 * lists these and the settings that may differ; test/instance-registry.test.ts keeps the two in step.
 */
export const SHARED_SETTINGS: ReadonlyArray<{
  readonly name: string;
  readonly usedBy: (role: InstanceRole) => boolean;
  readonly read: Reader;
}> = [
  // Any process opens the signing secrets the others sealed; only a keyed digest is ever stored.
  { name: "SECRETS_KEY", usedBy: () => true, read: (_config, key) => ({ digest: secretsKeyDigest(key) }) },
  { name: "ALLOW_PRIVATE_CALLBACKS", usedBy: () => true, read: (c) => value(c.allowPrivateCallbacks) },
  api("CARRIER_SEGMENT", (c) => value(c.carrierSegment)),
  api("AWB_CHECK_DIGIT", (c) => value(c.awbCheckDigit)),
  api("REDIS_URL", (c) => value(c.redisUrl === undefined ? "unset" : withoutCredentials(c.redisUrl))),
  api("RATE_LIMIT_PER_SECOND", (c) => value(c.rateLimitPerSecond)),
  api("RATE_LIMIT_BURST", (c) => value(c.rateLimitBurst)),
  api("AUTH_FAILURE_LIMIT_PER_SECOND", (c) => value(c.authFailureLimitPerSecond)),
  api("AUTH_FAILURE_LIMIT_BURST", (c) => value(c.authFailureLimitBurst)),
  api("GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND", (c) => value(c.graphqlAnonymousLimitPerSecond)),
  api("GRAPHQL_ANONYMOUS_LIMIT_BURST", (c) => value(c.graphqlAnonymousLimitBurst)),
  api("LIVE_MAX_CONNECTIONS_PER_KEY", (c) => value(c.liveMaxConnectionsPerKey)),
  api("LIVE_CONNECTION_LEASE_MS", (c) => value(c.liveConnectionLeaseMs)),
  api("LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET", (c) => value(c.liveMaxSubscriptionsPerSocket)),
  api("LIVE_MAX_QUEUED_EVENTS", (c) => value(c.liveMaxQueuedEvents)),
  api("LIVE_KEY_RECHECK_MS", (c) => value(c.liveKeyRecheckMs)),
  api("GRAPHQL_INTROSPECTION", (c) => value(c.graphqlIntrospection)),
  api("GRAPHQL_MAX_DEPTH", (c) => value(c.graphqlLimits.maxDepth)),
  api("GRAPHQL_MAX_COST", (c) => value(c.graphqlLimits.maxCost)),
  api("GRAPHQL_MAX_ALIASES", (c) => value(c.graphqlLimits.maxAliases)),
  api("GRAPHQL_MAX_LIST_ARGUMENT", (c) => value(c.graphqlLimits.maxListArgument)),
  api("GRAPHQL_MAX_BATCH", (c) => value(c.graphqlLimits.maxBatch)),
  api("GRAPHQL_TIME_LIMIT_MS", (c) => value(c.graphqlLimits.timeLimitMs)),
  api("GRAPHQL_MAX_TOKENS", (c) => value(c.graphqlLimits.maxTokens)),
  // The manifest's content, not its path: the same operations must be allowed everywhere.
  api("GRAPHQL_OPERATIONS_FILE", (c) => operationsFile(c.graphqlOperationsFile)),
  // One ONE Record node: the same paths, the same URIs, the same holder, the same tokens accepted.
  api("ONE_RECORD_BASE_PATH", (c) => value(c.oneRecord.basePath)),
  api("ONE_RECORD_BASE_URL", (c) => value(c.oneRecord.baseUrl ?? "unset")),
  api("ONE_RECORD_ORGANIZATION_NAME", (c) => value(c.oneRecord.organizationName)),
  api("ONE_RECORD_OIDC_ISSUER", (c) => value(c.oneRecord.oidc?.issuer ?? "unset")),
  api("ONE_RECORD_OIDC_JWKS_URL", (c) => value(c.oneRecord.oidc?.jwksUrl ?? "unset")),
  api("ONE_RECORD_OIDC_AUDIENCE", (c) => value(c.oneRecord.oidc?.audience ?? "unset")),
  // A quota counted in the database: every instance must count against the same numbers.
  api("ONE_RECORD_APPLY_HOLDER_CHANGES", (c) => value(c.oneRecord.applyHolderChanges)),
  api("ONE_RECORD_SUBSCRIBE_TO", (c) => value(c.oneRecord.subscribeTo)),
  api("ONE_RECORD_THIRD_PARTY_SUBSCRIBERS", (c) => value(c.oneRecord.thirdPartySubscribers)),
  api("ONE_RECORD_EVENTS_PER_DAY", (c) => value(c.oneRecord.eventQuota.perDay)),
  api("ONE_RECORD_EVENT_BYTES_PER_DAY", (c) => value(c.oneRecord.eventQuota.bytesPerDay)),
  api("ONE_RECORD_OBJECTS_PER_DAY", (c) => value(c.oneRecord.objectQuota.perDay)),
  api("ONE_RECORD_OBJECT_BYTES_PER_DAY", (c) => value(c.oneRecord.objectQuota.bytesPerDay)),
  api("ONE_RECORD_CHANGE_REQUESTS_PER_DAY", (c) => value(c.oneRecord.changeRequestQuota.perDay)),
  api("ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY", (c) => value(c.oneRecord.changeRequestQuota.bytesPerDay)),
  api("ONE_RECORD_NOTIFICATIONS_PER_DAY", (c) => value(c.oneRecord.notificationQuota.perDay)),
  api("ONE_RECORD_NOTIFICATION_BYTES_PER_DAY", (c) => value(c.oneRecord.notificationQuota.bytesPerDay)),
  api("ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER", (c) => value(c.oneRecord.delegationQuota.objectsPerRequester)),
  api("ONE_RECORD_DELEGATES_PER_OBJECT", (c) => value(c.oneRecord.delegationQuota.delegatesPerObject)),
  {
    name: "DELIVERY_RETRY_SCHEDULE",
    usedBy: (role) => role.deliveryWorker,
    read: (c) => value(c.delivery.retrySchedule.map((ms) => `${ms}ms`).join(",")),
  },
  {
    name: "DELIVERY_DISABLE_AFTER_HOURS",
    usedBy: (role) => role.deliveryWorker,
    read: (c) => value(c.delivery.disableAfterHours),
  },
  retention("RETENTION_DELIVERED_DAYS", (c) => value(c.retention.ages.delivered_deliveries)),
  retention("RETENTION_DEAD_DAYS", (c) => value(c.retention.ages.dead_deliveries)),
  retention("RETENTION_EVENTS_DAYS", (c) => value(c.retention.ages.events)),
  retention("RETENTION_EXPIRED_SUBSCRIPTIONS_DAYS", (c) => value(c.retention.ages.expired_subscriptions)),
];

function api(name: string, read: Reader) {
  return { name, usedBy: (role: InstanceRole) => role.api, read };
}

function retention(name: string, read: Reader) {
  return { name, usedBy: (role: InstanceRole) => role.retention, read };
}

/** What this process must share, by setting name. */
export function sharedSettings(config: Config, role: InstanceRole, secretsKey: Buffer): SharedSettings {
  const settings: Record<string, Setting> = {};
  for (const setting of SHARED_SETTINGS) {
    if (setting.usedBy(role)) settings[setting.name] = setting.read(config, secretsKey);
  }
  return settings;
}

/**
 * An HMAC of a fixed text under the key: equal for equal keys, and without the key it tells nothing
 * about it (the key is 32 random bytes).
 */
function secretsKeyDigest(key: Buffer): string {
  return createHmac("sha256", key).update("cargo-gateway instance settings: SECRETS_KEY").digest("hex");
}

/** Scheme, host, port and database number: a password is not stored, and may differ. */
function withoutCredentials(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname === "/" ? "" : parsed.pathname}`;
}

function operationsFile(file: string | undefined): Setting {
  if (file === undefined) return value("unset");
  try {
    return { digest: createHash("sha256").update(readFileSync(file)).digest("hex") };
  } catch {
    return value("unreadable"); // the GraphQL step fails on it with its own message
  }
}
