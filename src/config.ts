import { isIP } from "node:net";
import path from "node:path";
import { readCallbackPrefix } from "./domain/callback-prefix";
import type { RetentionAges } from "./domain/retention";
import { DEFAULT_RETRY_SCHEDULE, parseSchedule } from "./domain/retry-schedule";
import { MIN_LEASE_MS, SEND_BUDGET_MS } from "./domain/delivery-timing";

/** Everything the service reads from its environment. The only reader of process.env is main.ts,
 * which hands the environment to `loadConfig`; the result is validated, frozen and passed down. */
export interface Config {
  readonly port: number;
  /** What is deleted after how many days (0: kept), how often, in batches of how many rows (retention/). */
  readonly retention: {
    readonly ages: RetentionAges;
    readonly intervalMs: number;
    readonly batchSize: number;
  };
  /** `npm run worker`: where the standalone worker serves /healthz, /readyz and /metrics (0: any free port). */
  readonly workerPort: number;
  readonly host: string;
  /** Unset: the embedded PostgreSQL (PGlite) under `dataDir` (or in memory for "memory://"). */
  readonly databaseUrl: string | undefined;
  readonly dataDir: string;
  /** The embedded database only: vacuum its busy tables after this many changed rows (0: never; db/table-upkeep.ts). */
  readonly embeddedVacuumRows: number;
  /** Unset: live events fan out inside the process only. */
  readonly redisUrl: string | undefined;
  /** The RabbitMQ consumer of carrier messages (docs/INGESTION.md "Message broker"); unset without AMQP_URL. */
  readonly amqp:
    | {
        readonly url: string;
        readonly queue: string;
        /** Where unreadable messages go, with the reason in their headers. */
        readonly deadLetterQueue: string;
        readonly prefetch: number;
      }
    | undefined;
  readonly carrierSegment: string;
  readonly bootstrap: {
    readonly apiKey: string | undefined;
    readonly signingSecret: string | undefined;
    readonly callbackPrefixes: readonly string[];
  };
  readonly allowPrivateCallbacks: boolean;
  /**
   * The proxies (load balancers) whose X-Forwarded-For is believed: addresses, CIDR ranges or the
   * names loopback, linklocal, uniquelocal. Empty: the client address is the connection's peer.
   */
  readonly trustProxy: readonly string[];
  /** Seals webhook signing secrets at rest (32 bytes); unset: a key file under dataDir. */
  readonly secretsKey: Buffer | undefined;
  readonly awbCheckDigit: "off" | "enforce";
  readonly logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  readonly graphqlIntrospection: boolean;
  /** What one GraphQL operation may ask (docs/API.md "GraphQL limits"). */
  readonly graphqlLimits: {
    readonly maxDepth: number;
    readonly maxCost: number;
    readonly maxAliases: number;
    readonly maxListArgument: number;
    /** Operations in one batched HTTP request (a JSON array); 1 turns batching off. */
    readonly maxBatch: number;
    /** Per query or mutation over HTTP; 0: none. */
    readonly timeLimitMs: number;
    /** Tokens one document may hold: the parser stops past it, before anything is validated. */
    readonly maxTokens: number;
  };
  /** A persisted-query manifest: when set, only the operations it lists run. */
  readonly graphqlOperationsFile: string | undefined;
  /** How often an instance checks for a station import made by another instance; 0 turns it off. */
  readonly stationRefreshMs: number;
  /** Keep whole GraphQL answers to operations that read only station data (invalidated on import). */
  readonly graphqlResponseCache: boolean;
  /** Per API key: average requests a second and the burst allowed at once (0: no limit). */
  readonly rateLimitPerSecond: number;
  readonly rateLimitBurst: number;
  /** Per client address: failed authentications a second on average and at once (0: no limit). */
  readonly authFailureLimitPerSecond: number;
  readonly authFailureLimitBurst: number;
  /** Per client address: GraphQL requests over HTTP without an API key, a second on average and at once (0: no limit). */
  readonly graphqlAnonymousLimitPerSecond: number;
  readonly graphqlAnonymousLimitBurst: number;
  /** With REDIS_URL: how long a limit waits for Redis before this instance decides alone (docs/SECURITY.md "Limits across instances"). */
  readonly limitsRedisTimeoutMs: number;
  /** Matching events a live subscription may have waiting before it is closed as a slow consumer (4429). */
  readonly liveMaxQueuedEvents: number;
  /** Open websockets one API key may hold (on this instance; with REDIS_URL, across all of them). */
  readonly liveMaxConnectionsPerKey: number;
  /** With REDIS_URL: how long a websocket's slot under that cap outlives an instance that died without giving it back. */
  readonly liveConnectionLeaseMs: number;
  /** How often the key behind each websocket is looked up again; a revoked key\'s sockets close within it. */
  readonly liveKeyRecheckMs: number;
  /** Operations one websocket may run at once. */
  readonly liveMaxSubscriptionsPerSocket: number;
  /** How often each websocket is pinged; one that left the previous ping unanswered is dropped. */
  readonly liveKeepAliveMs: number;
  /** Run the delivery worker in this process (`npm run worker` runs one on its own). */
  readonly deliveryWorker: boolean;
  readonly delivery: {
    readonly concurrency: number;
    readonly perOrigin: number;
    readonly pollMs: number;
    readonly leaseMs: number;
    /** The part of a lease one send may use (not a setting: the contract's 10 s plus a recording margin). */
    readonly sendBudgetMs: number;
    /** Milliseconds to wait before each retry. */
    readonly retrySchedule: readonly number[];
    /** Consecutive failures that open an origin's circuit (0: never), and how long it stays open (doubling). */
    readonly circuit: { readonly failures: number; readonly openMs: number; readonly maxOpenMs: number };
    /** A subscription every attempt of which has failed for this long is disabled (0: never). */
    readonly disableAfterHours: number;
  };
  /**
   * OpenTelemetry traces exported over OTLP/HTTP (docs/OPERATIONS.md "Tracing"). Undefined (no
   * endpoint set, or OTEL_SDK_DISABLED=true): off, and nothing of OpenTelemetry is registered.
   */
  readonly tracing: TracingSettings | undefined;
  /** The IATA ONE Record API (docs/ONE-RECORD.md). */
  readonly oneRecord: OneRecordSettings;
}

export interface OneRecordSettings {
  /** ONE_RECORD_BASE_PATH: where the API's routes are mounted on this server ("/onerecord"). */
  readonly basePath: string;
  /**
   * ONE_RECORD_BASE_URL: the public URL every logistics object's URI starts with (a proxy in front
   * must not change the URIs). Undefined: this server's own URL and base path, once it listens.
   */
  readonly baseUrl: string | undefined;
  /** ONE_RECORD_ORGANIZATION_NAME: the carrier's name on its Organization, the data holder. */
  readonly organizationName: string;
  /**
   * The OpenID Connect issuer whose access tokens identify ONE Record agents (`logistics_agent_uri`):
   * ONE_RECORD_OIDC_ISSUER, its keys at ONE_RECORD_OIDC_JWKS_URL, and the audience a token must name
   * (ONE_RECORD_OIDC_AUDIENCE, optional). Undefined: API keys only.
   */
  readonly oidc:
    { readonly issuer: string; readonly jwksUrl: string; readonly audience: string | undefined } | undefined;
  /**
   * How this server authenticates the ONE Record notifications it sends: an OAuth 2.0
   * client-credentials grant at ONE_RECORD_TOKEN_URL as ONE_RECORD_CLIENT_ID / _SECRET (optional
   * ONE_RECORD_TOKEN_SCOPE, ONE_RECORD_TOKEN_AUDIENCE). Undefined: notifications carry no Authorization.
   */
  readonly notificationToken: OneRecordTokenSettings | undefined;
  /**
   * ONE_RECORD_PROPOSAL_INTERVAL_MS: how often this instance runs the publisher-initiated proposal loop
   * (docs/ONE-RECORD.md "Publisher-initiated subscriptions"); 0: never on this instance.
   */
  readonly proposalIntervalMs: number;
  /**
   * ONE_RECORD_CHANGE_REQUESTS_PER_DAY and ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY: how many change
   * requests, and how many bytes of them, one Organization may store a UTC day (docs/ONE-RECORD.md "Quotas").
   */
  readonly changeRequestQuota: { readonly perDay: number; readonly bytesPerDay: number };
  /**
   * ONE_RECORD_OBJECTS_PER_DAY and ONE_RECORD_OBJECT_BYTES_PER_DAY: how many logistics objects, and how
   * many bytes of them, one Organization may create a UTC day (docs/ONE-RECORD.md "Quotas").
   */
  readonly objectQuota: { readonly perDay: number; readonly bytesPerDay: number };
  /** ONE_RECORD_EVENTS_PER_DAY and ONE_RECORD_EVENT_BYTES_PER_DAY: the same for logistics events posted. */
  readonly eventQuota: { readonly perDay: number; readonly bytesPerDay: number };
  /**
   * ONE_RECORD_APPLY_HOLDER_CHANGES: a holder's own change request is accepted and applied as it is
   * made (true), instead of waiting REQUEST_PENDING for the holder's decision, as every other's does
   * (false, the specification's flow: the default).
   */
  readonly applyHolderChanges: boolean;
  /**
   * ONE_RECORD_SUBSCRIBE_TO: what this server wants when a publisher proposes a subscription (GET
   * /subscriptions): `any` topic (every event type, unless a wish says otherwise: the specification's
   * default) or only the operator's `wishes`.
   */
  readonly subscribeTo: "any" | "wishes";
  /**
   * ONE_RECORD_THIRD_PARTY_SUBSCRIBERS: who a POSTed subscription may name as subscriber besides the
   * caller's own Organization. `any` Organization (the specification's flow: the request waits for the
   * topic's holder to accept it; the default), only those the operator `registered` a server for, or
   * `none` (docs/ONE-RECORD.md "Subscriptions for a third party").
   */
  readonly thirdPartySubscribers: "any" | "registered" | "none";
  /**
   * ONE_RECORD_NOTIFICATIONS_PER_DAY and ONE_RECORD_NOTIFICATION_BYTES_PER_DAY: how many notifications,
   * and how many bytes of them as stored, one partner may send here a UTC day (docs/ONE-RECORD.md
   * "Receiving notifications"). At least a MiB: one notification stored is at most that.
   */
  readonly notificationQuota: { readonly perDay: number; readonly bytesPerDay: number };
  /**
   * ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER and ONE_RECORD_DELEGATES_PER_OBJECT: the logistics objects
   * one requester's stored access delegations may name in all, and the Organizations it may grant any
   * one object to (docs/ONE-RECORD.md "Access delegations", quotas).
   */
  readonly delegationQuota: { readonly objectsPerRequester: number; readonly delegatesPerObject: number };
}

export interface OneRecordTokenSettings {
  readonly url: string;
  readonly clientId: string;
  readonly clientSecret: string;
  readonly scope: string | undefined;
  readonly audience: string | undefined;
}

export interface TracingSettings {
  /** The URL spans are POSTed to: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, or OTEL_EXPORTER_OTLP_ENDPOINT + "v1/traces". */
  readonly endpoint: string;
  /** OTEL_SERVICE_NAME: the `service.name` of every span. */
  readonly serviceName: string;
  /** The share of traces started here that are recorded, 0 to 1; a trace continued from a caller follows its sampled flag. */
  readonly sampleRatio: number;
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    reason: string,
  ) {
    super(`Invalid configuration: ${variable} ${reason}`);
    this.name = "ConfigError";
  }
}

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

/** A number of days, fractions allowed (0.5: twelve hours), from 0 to 36,500. */
function days(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d*\.?\d+$|^\d+\.$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 36_500))
    throw new ConfigError(name, `must be a number of days from 0 to 36500 (fractions allowed), got "${raw}"`);
  return value;
}

const PROXY_RANGE_NAMES = new Set(["loopback", "linklocal", "uniquelocal"]);

/** TRUST_PROXY: a comma-separated list of addresses, CIDR ranges and range names; never "everyone". */
function trustedProxies(env: Env): readonly string[] {
  const raw = text(env, "TRUST_PROXY");
  if (raw === undefined) return Object.freeze([]);
  const entries = raw.split(",").map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = "", bits, ...more] = entry.split("/");
    const version = isIP(address);
    // A range wider than /8 (IPv6: /16) holds much of the internet, not a set of balancers.
    const [narrowest, widest] = version === 6 ? [128, 16] : [32, 8];
    const validBits =
      bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) >= widest && Number(bits) <= narrowest);
    if (!(PROXY_RANGE_NAMES.has(entry) || (version !== 0 && validBits && more.length === 0)))
      throw new ConfigError(
        "TRUST_PROXY",
        `has "${entry}": give the load balancers' addresses or CIDR ranges no wider than /8 (IPv6: /16), or loopback, linklocal, uniquelocal — never every address, which would let any client choose its own`,
      );
  }
  return Object.freeze(entries);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(", ")}, got "${raw}"`);
  }
  return raw as T;
}

function url(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, "is not a URL");
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must start with ${protocols.map((p) => `${p}//`).join(" or ")}`);
  }
  return raw;
}

function schedule(env: Env, name: string): number[] {
  const raw = text(env, name) ?? DEFAULT_RETRY_SCHEDULE;
  const parsed = parseSchedule(raw);
  if (!parsed) throw new ConfigError(name, `must be comma-separated durations such as "5s,30s,2m,1h", got "${raw}"`);
  return parsed;
}

/** An AMQP queue name: at most 255 bytes (a short string), printable, and not in the broker's reserved "amq." space. */
function queueName(env: Env, name: string, fallback: string): string {
  const value = text(env, name) ?? fallback;
  if (Buffer.byteLength(value) > 255 || !/^[\x21-\x7e]+$/.test(value) || value.startsWith("amq."))
    throw new ConfigError(
      name,
      `must be a queue name of up to 255 printable characters, not starting with "amq.", got "${value}"`,
    );
  return value;
}

function amqp(env: Env): Config["amqp"] {
  const amqpUrl = url(env, "AMQP_URL", ["amqp:", "amqps:"]);
  if (amqpUrl === undefined) return undefined;
  const queue = queueName(env, "AMQP_QUEUE", "cargo.milestones");
  const deadLetterQueue = queueName(env, "AMQP_DEAD_LETTER_QUEUE", `${queue}.dead`);
  if (deadLetterQueue === queue)
    throw new ConfigError("AMQP_DEAD_LETTER_QUEUE", "must differ from AMQP_QUEUE: a dead letter would be read again");
  return Object.freeze({
    url: amqpUrl,
    queue,
    deadLetterQueue,
    prefetch: integer(env, "AMQP_PREFETCH", 500, 1, 10_000),
  });
}

/** A number from 0 to 1 (a share). */
function ratio(env: Env, name: string, fallback: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  const value = /^\d*\.?\d+$|^\d+\.$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 0 && value <= 1)) throw new ConfigError(name, `must be a number from 0 to 1, got "${raw}"`);
  return value;
}

/**
 * On when an OTLP endpoint is set, with the variables' standard meanings (the OpenTelemetry SDK
 * environment specification): the traces endpoint is used as given, the general one gets
 * "v1/traces" appended. Sampling is always parent-based: a caller's sampled flag decides for the
 * traces it continues, the ratio for those started here.
 */
function tracing(env: Env): Config["tracing"] {
  if (boolean(env, "OTEL_SDK_DISABLED", false)) return undefined;
  const tracesEndpoint = url(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ["http:", "https:"]);
  const baseEndpoint = url(env, "OTEL_EXPORTER_OTLP_ENDPOINT", ["http:", "https:"]);
  if (tracesEndpoint === undefined && baseEndpoint === undefined) return undefined;
  const endpoint = tracesEndpoint ?? `${baseEndpoint!.endsWith("/") ? baseEndpoint : `${baseEndpoint}/`}v1/traces`;
  const sampler = oneOf(
    env,
    "OTEL_TRACES_SAMPLER",
    ["parentbased_traceidratio", "parentbased_always_on", "parentbased_always_off"] as const,
    "parentbased_traceidratio",
  );
  const sampleRatio =
    sampler === "parentbased_always_on"
      ? 1
      : sampler === "parentbased_always_off"
        ? 0
        : ratio(env, "OTEL_TRACES_SAMPLER_ARG", 1);
  return Object.freeze({ endpoint, serviceName: text(env, "OTEL_SERVICE_NAME") ?? "cargo-gateway", sampleRatio });
}

/** `memory://` keeps the embedded database in memory only (nothing survives a restart). */
export const IN_MEMORY_DATA_DIR = "memory://";

function dataDir(raw: string, cwd: string): string {
  return raw === IN_MEMORY_DATA_DIR ? raw : path.resolve(cwd, raw);
}

function secretsKey(env: Env): Buffer | undefined {
  const raw = text(env, "SECRETS_KEY");
  if (raw === undefined) return undefined;
  const key = Buffer.from(raw, "base64");
  if (key.length !== 32 || !/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw))
    throw new ConfigError("SECRETS_KEY", "must be 32 random bytes in base64 (openssl rand -base64 32)");
  return key;
}

const TOKEN_SETTINGS = [
  "ONE_RECORD_TOKEN_URL",
  "ONE_RECORD_CLIENT_ID",
  "ONE_RECORD_CLIENT_SECRET",
  "ONE_RECORD_TOKEN_SCOPE",
  "ONE_RECORD_TOKEN_AUDIENCE",
] as const;

/** The client-credentials grant of outgoing ONE Record notifications: the URL, id and secret together, or none of the five. */
function oneRecordToken(env: Env): OneRecordTokenSettings | undefined {
  const tokenUrl = url(env, "ONE_RECORD_TOKEN_URL", ["http:", "https:"]);
  const clientId = text(env, "ONE_RECORD_CLIENT_ID");
  const clientSecret = text(env, "ONE_RECORD_CLIENT_SECRET");
  if (tokenUrl === undefined || clientId === undefined || clientSecret === undefined) {
    const given = TOKEN_SETTINGS.filter((name) => text(env, name) !== undefined);
    if (given.length === 0) return undefined;
    const missing = ["ONE_RECORD_TOKEN_URL", "ONE_RECORD_CLIENT_ID", "ONE_RECORD_CLIENT_SECRET"].filter(
      (name) => text(env, name) === undefined,
    );
    throw new ConfigError(
      given[0]!,
      `needs ${missing.join(" and ")}: ONE_RECORD_TOKEN_URL, ONE_RECORD_CLIENT_ID and ONE_RECORD_CLIENT_SECRET are set together`,
    );
  }
  return Object.freeze({
    url: tokenUrl,
    clientId,
    clientSecret,
    scope: text(env, "ONE_RECORD_TOKEN_SCOPE"),
    audience: text(env, "ONE_RECORD_TOKEN_AUDIENCE"),
  });
}

function oneRecord(env: Env): OneRecordSettings {
  const basePath = text(env, "ONE_RECORD_BASE_PATH") ?? "/onerecord";
  if (!/^(\/[A-Za-z0-9._~-]+)+$/.test(basePath))
    throw new ConfigError("ONE_RECORD_BASE_PATH", 'must be a path of one or more segments, such as "/onerecord"');
  const baseUrl = url(env, "ONE_RECORD_BASE_URL", ["http:", "https:"]);
  if (baseUrl !== undefined && (/[?#]/.test(baseUrl) || baseUrl.endsWith("/")))
    throw new ConfigError("ONE_RECORD_BASE_URL", "must be an absolute URL without a query, a fragment or a trailing /");
  const issuer = url(env, "ONE_RECORD_OIDC_ISSUER", ["http:", "https:"]);
  const jwksUrl = url(env, "ONE_RECORD_OIDC_JWKS_URL", ["http:", "https:"]);
  if ((issuer === undefined) !== (jwksUrl === undefined))
    throw new ConfigError(
      issuer === undefined ? "ONE_RECORD_OIDC_ISSUER" : "ONE_RECORD_OIDC_JWKS_URL",
      "must be set together with the other: ONE_RECORD_OIDC_ISSUER and ONE_RECORD_OIDC_JWKS_URL",
    );
  return Object.freeze({
    basePath,
    baseUrl,
    organizationName: text(env, "ONE_RECORD_ORGANIZATION_NAME") ?? "Carrier",
    oidc:
      issuer === undefined || jwksUrl === undefined
        ? undefined
        : Object.freeze({ issuer, jwksUrl, audience: text(env, "ONE_RECORD_OIDC_AUDIENCE") }),
    notificationToken: oneRecordToken(env),
    proposalIntervalMs: proposalInterval(env),
    applyHolderChanges: boolean(env, "ONE_RECORD_APPLY_HOLDER_CHANGES", false),
    subscribeTo: oneOf(env, "ONE_RECORD_SUBSCRIBE_TO", ["any", "wishes"] as const, "any"),
    thirdPartySubscribers: oneOf(
      env,
      "ONE_RECORD_THIRD_PARTY_SUBSCRIBERS",
      ["any", "registered", "none"] as const,
      "any",
    ),
    eventQuota: Object.freeze({
      perDay: integer(env, "ONE_RECORD_EVENTS_PER_DAY", 50_000, 1, 10_000_000),
      bytesPerDay: integer(env, "ONE_RECORD_EVENT_BYTES_PER_DAY", 128 * 1024 * 1024, 1024 * 1024, 2 ** 40),
    }),
    objectQuota: Object.freeze({
      perDay: integer(env, "ONE_RECORD_OBJECTS_PER_DAY", 20_000, 1, 10_000_000),
      bytesPerDay: integer(env, "ONE_RECORD_OBJECT_BYTES_PER_DAY", 256 * 1024 * 1024, 1024 * 1024, 2 ** 40),
    }),
    changeRequestQuota: Object.freeze({
      perDay: integer(env, "ONE_RECORD_CHANGE_REQUESTS_PER_DAY", 1_000, 1, 1_000_000),
      bytesPerDay: integer(env, "ONE_RECORD_CHANGE_REQUEST_BYTES_PER_DAY", 16 * 1024 * 1024, 1_024, 2 ** 40),
    }),
    delegationQuota: Object.freeze({
      objectsPerRequester: integer(env, "ONE_RECORD_DELEGATED_OBJECTS_PER_REQUESTER", 20_000, 100, 10_000_000),
      delegatesPerObject: integer(env, "ONE_RECORD_DELEGATES_PER_OBJECT", 50, 1, 100_000),
    }),
    notificationQuota: Object.freeze({
      perDay: integer(env, "ONE_RECORD_NOTIFICATIONS_PER_DAY", 5_000, 1, 10_000_000),
      bytesPerDay: integer(env, "ONE_RECORD_NOTIFICATION_BYTES_PER_DAY", 50 * 1024 * 1024, 1024 * 1024, 2 ** 40),
    }),
  });
}

/** 0 (off) or from 100 ms (a run is a few statements even when there is nothing to ask) to an hour. */
function proposalInterval(env: Env): number {
  const value = integer(env, "ONE_RECORD_PROPOSAL_INTERVAL_MS", 10_000, 0, 3_600_000);
  if (value !== 0 && value < 100)
    throw new ConfigError("ONE_RECORD_PROPOSAL_INTERVAL_MS", `must be 0 (off) or at least 100, got ${value}`);
  return value;
}

export function loadConfig(env: Env, cwd = process.cwd()): Config {
  const carrierSegment = text(env, "CARRIER_SEGMENT") ?? "carrier";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(carrierSegment)) {
    throw new ConfigError("CARRIER_SEGMENT", "must be one path segment of letters, digits, '-' or '_'");
  }
  const signingSecret = text(env, "BOOTSTRAP_SIGNING_SECRET");
  if (signingSecret !== undefined && !/^whsec_[A-Za-z0-9+/]{16,}={0,2}$/.test(signingSecret)) {
    throw new ConfigError("BOOTSTRAP_SIGNING_SECRET", 'must be "whsec_" followed by base64 of at least 12 bytes');
  }
  const apiKey = text(env, "BOOTSTRAP_API_KEY");
  if (apiKey !== undefined && !/^[\x21-\x7e]{16,256}$/.test(apiKey)) {
    throw new ConfigError("BOOTSTRAP_API_KEY", "must be 16 to 256 printable characters without spaces");
  }
  const prefixes = (text(env, "BOOTSTRAP_CALLBACK_PREFIXES") ?? "*")
    .split(",")
    .map((p) => p.trim())
    .filter((p) => p !== "");
  for (const prefix of prefixes) {
    const read = readCallbackPrefix(prefix);
    if ("problem" in read)
      throw new ConfigError("BOOTSTRAP_CALLBACK_PREFIXES", `has "${prefix}", which ${read.problem}`);
  }

  const circuitOpenMs = integer(env, "DELIVERY_CIRCUIT_OPEN_MS", 30_000, 100, 86_400_000);
  const circuitMaxOpenMs = integer(env, "DELIVERY_CIRCUIT_MAX_OPEN_MS", 600_000, 100, 86_400_000);
  if (circuitMaxOpenMs < circuitOpenMs)
    throw new ConfigError(
      "DELIVERY_CIRCUIT_MAX_OPEN_MS",
      `is ${circuitMaxOpenMs}, less than DELIVERY_CIRCUIT_OPEN_MS (${circuitOpenMs}): the open time only grows`,
    );
  const deliveryConcurrency = integer(env, "DELIVERY_CONCURRENCY", 64, 1, 10_000);
  const deliveryPerOrigin = integer(env, "DELIVERY_PER_ORIGIN", 8, 1, 1_000);
  if (deliveryPerOrigin > deliveryConcurrency) {
    throw new ConfigError(
      "DELIVERY_PER_ORIGIN",
      `is ${deliveryPerOrigin}, more than DELIVERY_CONCURRENCY (${deliveryConcurrency}): one origin cannot have more sends in flight than all of them`,
    );
  }

  return Object.freeze({
    port: integer(env, "PORT", 8080, 0, 65535),
    workerPort: integer(env, "WORKER_PORT", 8081, 0, 65535),
    host: text(env, "HOST") ?? "127.0.0.1",
    databaseUrl: url(env, "DATABASE_URL", ["postgres:", "postgresql:"]),
    dataDir: dataDir(text(env, "DATA_DIR") ?? "./data", cwd),
    embeddedVacuumRows: integer(env, "EMBEDDED_VACUUM_ROWS", 20_000, 0, 10_000_000),
    redisUrl: url(env, "REDIS_URL", ["redis:", "rediss:"]),
    amqp: amqp(env),
    carrierSegment,
    bootstrap: Object.freeze({ apiKey, signingSecret, callbackPrefixes: Object.freeze(prefixes) }),
    allowPrivateCallbacks: boolean(env, "ALLOW_PRIVATE_CALLBACKS", false),
    trustProxy: trustedProxies(env),
    secretsKey: secretsKey(env),
    awbCheckDigit: oneOf(env, "AWB_CHECK_DIGIT", ["off", "enforce"] as const, "off"),
    logLevel: oneOf(env, "LOG_LEVEL", ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const, "info"),
    graphqlIntrospection: boolean(env, "GRAPHQL_INTROSPECTION", true),
    graphqlLimits: Object.freeze({
      maxDepth: integer(env, "GRAPHQL_MAX_DEPTH", 12, 2, 100),
      maxCost: integer(env, "GRAPHQL_MAX_COST", 300_000, 1, 100_000_000),
      maxAliases: integer(env, "GRAPHQL_MAX_ALIASES", 30, 0, 10_000),
      maxListArgument: integer(env, "GRAPHQL_MAX_LIST_ARGUMENT", 1_000, 1, 100_000),
      maxBatch: integer(env, "GRAPHQL_MAX_BATCH", 10, 1, 1_000),
      timeLimitMs: integer(env, "GRAPHQL_TIME_LIMIT_MS", 10_000, 0, 600_000),
      maxTokens: integer(env, "GRAPHQL_MAX_TOKENS", 2_000, 100, 1_000_000),
    }),
    graphqlOperationsFile:
      text(env, "GRAPHQL_OPERATIONS_FILE") === undefined
        ? undefined
        : path.resolve(cwd, text(env, "GRAPHQL_OPERATIONS_FILE")!),
    stationRefreshMs: integer(env, "STATION_REFRESH_MS", 5_000, 0, 3_600_000),
    graphqlResponseCache: boolean(env, "GRAPHQL_RESPONSE_CACHE", true),
    rateLimitPerSecond: integer(env, "RATE_LIMIT_PER_SECOND", 200, 0, 1_000_000),
    rateLimitBurst: integer(env, "RATE_LIMIT_BURST", 400, 1, 1_000_000),
    authFailureLimitPerSecond: integer(env, "AUTH_FAILURE_LIMIT_PER_SECOND", 10, 0, 1_000_000),
    authFailureLimitBurst: integer(env, "AUTH_FAILURE_LIMIT_BURST", 20, 1, 1_000_000),
    graphqlAnonymousLimitPerSecond: integer(env, "GRAPHQL_ANONYMOUS_LIMIT_PER_SECOND", 20, 0, 1_000_000),
    graphqlAnonymousLimitBurst: integer(env, "GRAPHQL_ANONYMOUS_LIMIT_BURST", 40, 1, 1_000_000),
    limitsRedisTimeoutMs: integer(env, "LIMITS_REDIS_TIMEOUT_MS", 250, 10, 10_000),
    liveMaxQueuedEvents: integer(env, "LIVE_MAX_QUEUED_EVENTS", 10_000, 10, 10_000_000),
    liveMaxConnectionsPerKey: integer(env, "LIVE_MAX_CONNECTIONS_PER_KEY", 50, 1, 1_000_000),
    liveConnectionLeaseMs: integer(env, "LIVE_CONNECTION_LEASE_MS", 30_000, 1_000, 3_600_000),
    liveKeyRecheckMs: integer(env, "LIVE_KEY_RECHECK_MS", 5_000, 100, 3_600_000),
    liveMaxSubscriptionsPerSocket: integer(env, "LIVE_MAX_SUBSCRIPTIONS_PER_SOCKET", 100, 1, 100_000),
    liveKeepAliveMs: integer(env, "LIVE_KEEP_ALIVE_MS", 12_000, 1_000, 3_600_000),
    deliveryWorker: boolean(env, "DELIVERY_WORKER", true),
    delivery: Object.freeze({
      concurrency: deliveryConcurrency,
      perOrigin: deliveryPerOrigin,
      pollMs: integer(env, "DELIVERY_POLL_MS", 500, 10, 60_000),
      // A send starts only while SEND_BUDGET_MS of its lease is left; the rest is the window in which
      // prefetched claims can start (delivery.worker.ts).
      leaseMs: integer(env, "DELIVERY_LEASE_MS", 30_000, MIN_LEASE_MS, 3_600_000),
      sendBudgetMs: SEND_BUDGET_MS,
      retrySchedule: Object.freeze(schedule(env, "DELIVERY_RETRY_SCHEDULE")),
      circuit: Object.freeze({
        failures: integer(env, "DELIVERY_CIRCUIT_FAILURES", 10, 0, 1_000_000),
        openMs: circuitOpenMs,
        maxOpenMs: circuitMaxOpenMs,
      }),
      disableAfterHours: integer(env, "DELIVERY_DISABLE_AFTER_HOURS", 120, 0, 87_600),
    }),
    tracing: tracing(env),
    oneRecord: oneRecord(env),
    retention: Object.freeze({
      ages: Object.freeze({
        delivered_deliveries: days(env, "RETENTION_DELIVERED_DAYS", 30),
        dead_deliveries: days(env, "RETENTION_DEAD_DAYS", 90),
        events: days(env, "RETENTION_EVENTS_DAYS", 365),
        carrier_statuses: days(env, "RETENTION_EVENTS_DAYS", 365),
        expired_subscriptions: days(env, "RETENTION_EXPIRED_SUBSCRIPTIONS_DAYS", 30),
        // ONE Record's by the windows of their legacy counterparts: a received notification is kept as
        // long as a delivered one, an ended SubscriptionRequest (and a spent proposal) as an expired
        // subscription.
        onerecord_notifications_received: days(env, "RETENTION_DELIVERED_DAYS", 30),
        onerecord_subscriptions: days(env, "RETENTION_EXPIRED_SUBSCRIPTIONS_DAYS", 30),
        onerecord_proposals: days(env, "RETENTION_EXPIRED_SUBSCRIPTIONS_DAYS", 30),
        // An ended access delegation, as an ended SubscriptionRequest.
        onerecord_access_delegations: days(env, "RETENTION_EXPIRED_SUBSCRIPTIONS_DAYS", 30),
      }),
      intervalMs: integer(env, "RETENTION_INTERVAL_MS", 300_000, 0, 86_400_000),
      batchSize: integer(env, "RETENTION_BATCH_SIZE", 1_000, 1, 100_000),
    }),
  });
}
