import type { Logger } from "pino";
import type { Dispatcher } from "undici";
import type { BootstrapOutcome } from "../clients/bootstrap-client";
import { createClientService } from "../clients/client.service";
import { createSecretBox, loadSecretsKey } from "../clients/secret-box";
import type { Config } from "../config";
import { type Database, DATA_DIR_TAKEN, openConfiguredDatabase } from "../db/database";
import { createTableUpkeep, embeddedVacuumTables, type TableUpkeep } from "../db/table-upkeep";
import { registerInstance } from "../db/instance-registry";
import { analyze } from "../db/sql/analyze.sql";
import { checkpoint } from "../db/sql/checkpoint.sql";
import { staleStatistics } from "../db/sql/stale-statistics.sql";
import { vacuum } from "../db/sql/vacuum.sql";
import { createDeliveryMetrics, type DeliveryMetrics } from "../delivery/delivery.metrics";
import { createOneRecordTokens, startDeliveryWorker, type RunningDeliveryWorker } from "../delivery/delivery.runtime";
import { createDeliveryService } from "../delivery/delivery.service";
import { createDeliveryStore, type DeliveryStore } from "../delivery/delivery.store";
import { createHealthService } from "../health/health.service";
import { type BrokerConsumer, startBrokerConsumer } from "../ingestion/broker-consumer";
import { readBrokerMessage } from "../ingestion/broker-message";
import { createRetentionMetrics } from "../retention/retention.metrics";
import { createRetentionStore, TABLES_OF } from "../retention/retention.store";
import { type RetentionWorker, startRetentionWorker } from "../retention/retention.worker";
import { createBrokerMetrics } from "../ingestion/broker.metrics";
import { createLiveEvents, type LiveEvents } from "../live/live-events";
import { createMilestoneService } from "../milestones/milestone.service";
import { createLateBase, type LateBase } from "../onerecord/notifications-out/late-base";
import {
  createNotificationProducers,
  type NotificationProducers,
} from "../onerecord/notifications-out/notification-producers";
import { notificationEndpointOf } from "../onerecord/partners/notification-endpoint";
import { type PartnerServers, partnerServersOf } from "../onerecord/partners/partner-servers";
import { createOneRecordUris } from "../onerecord/uris";
import { milestoneView } from "../milestones/milestone.view";
import { createGuardedAgent } from "../outbound/guarded-agent";
import type { TokenClient } from "../outbound/token-client";
import { createPartnerAdmin } from "../onerecord/partners/partner-admin";
import type { Services } from "../services";
import { createStationService } from "../stations/station.service";
import { createStationStore } from "../stations/station.store";
import { verifyCallback } from "../subscriptions/callback-verifier";
import { createSubscriptionService } from "../subscriptions/subscription.service";
import type { DisposerStack } from "./disposer-stack";
import { gatewayRole, sharedSettings } from "./shared-settings";

/**
 * After a round of upkeep of the busy tables, the next waits at least four times its duration, so
 * on the embedded database upkeep takes at most a fifth of the gateway's thread over time
 * (db/table-upkeep.ts).
 */
const UPKEEP_REST_FACTOR = 4;

/**
 * On PostgreSQL: after this many changed rows, whether the claim's table changed by more than its
 * analysed size (plus `STATISTICS_SLACK_ROWS`) since it was last analysed; if so it is analysed.
 */
const STATISTICS_CHECK_ROWS = 5_000;
const STATISTICS_SLACK_ROWS = 1_000;
/** The table whose plan matters most under load: the claim's (delivery/sql/claim-due.sql.ts). */
const CLAIM_TABLES = ["delivery"];

/** The named steps of a start, in order (a failure at any of them closes what the earlier ones opened). */
export const START_STEPS = [
  "database",
  "instances",
  "stations",
  "secrets",
  "callback-agent",
  "live-events",
  "delivery-worker",
  "broker",
  "retention",
  "http",
  "live-streams",
  "websocket",
  "graphql",
] as const;
export type StartStep = (typeof START_STEPS)[number];
/** Called before each start step; what it throws fails the start there (tests use it to fail each step). */
export type BeforeStep = (step: StartStep) => void | Promise<void>;

export interface Core {
  readonly database: Database;
  readonly services: Services;
  readonly bootstrap: BootstrapOutcome;
  readonly live: LiveEvents;
  readonly metrics: DeliveryMetrics;
  readonly deliveryStore: DeliveryStore;
  readonly callbackAgent: Dispatcher;
  /** The delivery worker of this process, unless DELIVERY_WORKER=false. */
  readonly worker: RunningDeliveryWorker | undefined;
  /** Deletes what outlived its retention, every RETENTION_INTERVAL_MS. */
  readonly retention: RetentionWorker;
  /** The access tokens this process calls other ONE Record servers with (ONE_RECORD_TOKEN_URL); none: unset. */
  readonly oneRecordTokens: TokenClient | undefined;
  /** The registered partners' servers and their tokens' audiences (partners/partner-servers.ts). */
  readonly oneRecordPartnerServers: PartnerServers;
  /** What queues ONE Record notifications, and the base URL of their URIs (set by mount-onerecord.ts). */
  readonly oneRecordNotifications: { readonly producers: NotificationProducers; readonly base: LateBase };
  /** Told of what writers change, so the embedded database's log is checkpointed (db/table-upkeep.ts); none with EMBEDDED_VACUUM_ROWS=0. */
  readonly tableUpkeep: TableUpkeep | undefined;
}

/** The database the configuration names (or `opening`, its open already started), closed last by `stack`. */
async function openDatabaseOfConfig(
  config: Config,
  log: Logger,
  stack: DisposerStack,
  embeddedDump: Blob | undefined,
  opening: Promise<Database> | undefined,
): Promise<Database> {
  const database = await (opening ?? openConfiguredDatabase(config, DATA_DIR_TAKEN, embeddedDump));
  if (opening === undefined) stack.defer("database", () => database.close());
  if (database.createdMigrated) log.info("created the embedded database from a migrated copy");
  if (database.appliedMigrations.length > 0) {
    log.info({ migrations: database.appliedMigrations }, "applied database migrations");
  }
  return database;
}

/**
 * Opens the database (unless given one) and builds every service, the live fan-out and the delivery
 * worker; each resource is put on `stack` as soon as it is open, so a failure at a later step closes it.
 */
export async function buildServices(
  config: Config,
  log: Logger,
  stack: DisposerStack,
  beforeStep: BeforeStep,
  given: { embeddedDatabaseDump?: Blob; database?: Database; openingDatabase?: Promise<Database> } = {},
): Promise<Core> {
  const opening = given.openingDatabase;
  // Closed last, whichever step fails: it is this app's from the start.
  if (opening)
    stack.defer("database", () =>
      opening.then(
        (database) => database.close(),
        () => {}, // it never opened: the start reports why
      ),
    );
  await beforeStep("database");
  const database =
    given.database ?? (await openDatabaseOfConfig(config, log, stack, given.embeddedDatabaseDump, opening));
  log.info(
    { database: database.kind, ...(database.kind === "pglite" ? { dataDir: config.dataDir } : {}) },
    "database ready",
  );

  await beforeStep("instances");
  const secretsKey = loadSecretsKey(config);
  // On PostgreSQL other instances may be running: refuse to start with settings that differ from
  // theirs (docs/DEPLOYMENT.md). The embedded database belongs to this process alone.
  if (database.kind === "postgres") {
    const settings = sharedSettings(config, gatewayRole(config), secretsKey.key);
    const instance = await registerInstance(database.sql, { kind: "gateway", settings, log });
    stack.defer("instances", () => instance.close());
  }

  await beforeStep("stations");
  const stations = createStationService({ store: createStationStore(database.prisma), log });
  stack.defer("stations", () => stations.stop());
  await stations.start({ refreshIntervalMs: config.stationRefreshMs });

  await beforeStep("secrets");
  log.info(
    { source: secretsKey.source, ...(secretsKey.file ? { file: secretsKey.file } : {}) },
    "signing secrets are sealed at rest",
  );
  const clients = createClientService({ prisma: database.prisma, log, secrets: createSecretBox(secretsKey.key) });
  await clients.prepareSecrets();
  const bootstrap = await clients.ensureBootstrapClient(config.bootstrap);

  await beforeStep("callback-agent");
  // One agent for every call to a client's callback: keep-alive per origin, addresses checked on connect.
  const callbackAgent = createGuardedAgent({ allowPrivate: config.allowPrivateCallbacks });
  stack.defer("callback-agent", () => callbackAgent.close());

  await beforeStep("live-events");
  const live = createLiveEvents({ redisUrl: config.redisUrl, log });
  stack.defer("live-events", () => live.close());

  const deliveryStore = createDeliveryStore(database.sql);
  const metrics = createDeliveryMetrics(deliveryStore);
  const upkeep = tableUpkeep(database, config, log);
  let worker: RunningDeliveryWorker | undefined;
  // ONE Record producers (docs/ONE-RECORD.md "What is notified"): ingestion queues its milestones'
  // notifications. Their URIs' base: ONE_RECORD_BASE_URL, or the routes' once HTTP listens.
  const oneRecordBase = createLateBase(config.oneRecord.baseUrl);
  const oneRecordProducers = createNotificationProducers({
    uris: createOneRecordUris(() => oneRecordBase.get()),
    endpointOf: (tx, organizationId) => notificationEndpointOf(tx, organizationId),
  });
  const milestones = createMilestoneService({
    notifyAlso: {
      topics: (awbs, firstAwbs, statuses) => oneRecordProducers.milestoneTopics(awbs, firstAwbs, statuses),
      deliveries: (tx, stored, firstAwbs, found, statuses) =>
        oneRecordProducers.milestoneDeliveries(tx, stored, firstAwbs, found, statuses),
    },
    prisma: database.prisma,
    // With DELIVERY_WORKER=false there is no worker here to hand new deliveries to.
    handoff: config.deliveryWorker
      ? {
          leaseMs: config.delivery.leaseMs,
          room: (origin) => worker?.handoff.room(origin) ?? 0,
          take: (deliveries, startedAt) => {
            upkeep?.changed(deliveries.length); // inserted as well, only not left for a claim
            worker?.handoff.take(deliveries, startedAt);
          },
        }
      : undefined,
    onCommitted: (events, deliveryCount) => {
      metrics.recordEvents(events.length);
      upkeep?.changed(events.length + deliveryCount); // the deliveries handed off are counted in `take`
      if (deliveryCount > 0) worker?.wakeAfterLocalCommit();
      // After the commit only: a live subscriber never sees an event that could still roll back.
      // On the next turn, so the ingestion's answer is not held up by a large local fan-out.
      const views = events.map(milestoneView);
      setImmediate(() => live.publish(views));
    },
  });
  const deliveries = createDeliveryService({
    prisma: database.prisma,
    sql: database.sql,
    onRequeued: () => worker?.wake(),
  });
  const enforceCheckDigit = config.awbCheckDigit === "enforce";
  let broker: BrokerConsumer | undefined;
  const services: Services = {
    health: createHealthService(database, live, () => (broker ? broker.status() : "not used")),
    stations,
    clients,
    subscriptions: createSubscriptionService({
      sql: database.sql,
      verifyCallback: (callback, check) => verifyCallback(callback, { ...check, dispatcher: callbackAgent }),
      allowPrivateCallbacks: config.allowPrivateCallbacks,
      enforceCheckDigit,
    }),
    milestones,
    deliveries,
    oneRecordPartners: createPartnerAdmin(database.prisma, () => {
      try {
        return oneRecordBase.get();
      } catch {
        return undefined; // not listening yet: URIs of this server are not known
      }
    }),
    enforceCheckDigit,
  };

  await beforeStep("delivery-worker");
  // One token client for the process: its notifications (the worker) and its proposals share tokens.
  const oneRecordTokens = createOneRecordTokens(config, metrics, log, {
    sends: config.deliveryWorker || config.oneRecord.proposalIntervalMs > 0,
  });
  // Where ONE Record notifications and proposals may go, and with which audience's token: the registered partners.
  const oneRecordPartnerServers = partnerServersOf(database.prisma);
  if (config.deliveryWorker) {
    // Started before the transports, stopped after them: ingestions still in flight at a stop can
    // hand their deliveries to it.
    worker = startDeliveryWorker({
      config,
      store: deliveryStore,
      clients,
      dispatcher: callbackAgent,
      metrics,
      log,
      tokens: oneRecordTokens,
      partnerOf: (url) => oneRecordPartnerServers.targetOf(url),
      // Each recorded outcome updated its delivery twice (claim, outcome) and added an attempt.
      onRecorded: (outcomes) => upkeep?.changed(3 * outcomes),
    });
    const started = worker;
    stack.defer("delivery-worker", () => started.stop());
  }
  // Deferred after the worker so that it stops first (the stack runs last in, first out): the
  // outcomes a stopping worker records must not start a round of upkeep that the stop then waits for.
  if (upkeep) stack.defer("table-upkeep", () => upkeep.stop());

  await beforeStep("broker");
  if (config.amqp) {
    // After the worker, so it is stopped before it: messages in flight at a stop can still hand their
    // deliveries over. A broker that does not answer does not fail the start: the consumer retries.
    const consumer = startBrokerConsumer({
      ...config.amqp,
      read: (contentType, body, receivedAt, properties) =>
        readBrokerMessage(
          contentType,
          body,
          {
            enforceCheckDigit,
            now: receivedAt,
            timeZoneOf: (station) => stations.timeZoneOf(station),
            isStation: (code) => stations.isStation(code),
          },
          properties,
        ),
      ingest: (events, receivedAt, statuses) => milestones.ingest(events, receivedAt, statuses, "broker"),
      metrics: createBrokerMetrics(metrics.registry),
      log,
    });
    broker = consumer;
    stack.defer("broker", () => consumer.close());
    await consumer.started;
  }

  await beforeStep("retention");
  const retentionStore = createRetentionStore(database.prisma);
  const retentionMetrics = createRetentionMetrics(metrics.registry, () => retentionStore.tableSizes());
  const retention = startRetentionWorker({
    ...config.retention,
    pruneBatch: (kind, before, limit) => retentionStore.pruneBatch(kind, before, limit),
    expirePendingBatch: (limit, disabledBefore) => retentionStore.expirePendingBatch(limit, disabledBefore),
    onExpired: (rows) => retentionMetrics.expired(rows),
    onPruned: (kind, rows) => retentionMetrics.deleted(kind, rows),
    onRun: (outcome) => retentionMetrics.run(outcome),
    // The embedded database runs no autovacuum: retention vacuums what it deleted from. A server has its own.
    vacuum: config.databaseUrl
      ? undefined
      : (kinds) => retentionStore.vacuum([...new Set(kinds.flatMap((kind) => TABLES_OF[kind]))]),
    log,
  });
  stack.defer("retention", () => retention.stop());
  return {
    database,
    services,
    bootstrap,
    live,
    metrics,
    deliveryStore,
    callbackAgent,
    worker,
    retention,
    oneRecordNotifications: { producers: oneRecordProducers, base: oneRecordBase },
    oneRecordTokens,
    oneRecordPartnerServers,
    tableUpkeep: upkeep,
  };
}

/**
 * The embedded database runs no autovacuum and no checkpointer: the tables every milestone and
 * delivery write to are vacuumed and analysed, and its log checkpointed, as they change. A server
 * does this itself, but only once a naptime: there the claim's table is analysed when it outgrew its
 * statistics in between (db/table-upkeep.ts), skipping it while another session holds a conflicting
 * lock. Two instances may both decide to analyse it; the later then analyses again (a second sample
 * of the table on the server) or, while the earlier still runs, skips it.
 */
function tableUpkeep(database: Database, config: Config, log: Logger): TableUpkeep | undefined {
  if (database.kind === "pglite") {
    if (config.embeddedVacuumRows === 0) return undefined;
    let round = 0;
    return createTableUpkeep({
      threshold: config.embeddedVacuumRows,
      restFactor: UPKEEP_REST_FACTOR,
      run: async () => {
        await vacuum(embeddedVacuumTables(++round)).affectedRows(database.prisma, {});
        await checkpoint.affectedRows(database.prisma, {});
      },
      done: "embedded database vacuumed, analysed and checkpointed",
      log,
    });
  }
  return createTableUpkeep({
    threshold: STATISTICS_CHECK_ROWS,
    restFactor: UPKEEP_REST_FACTOR,
    run: async () => {
      const stale = await staleStatistics.rows(database.sql, { tables: CLAIM_TABLES, slack: STATISTICS_SLACK_ROWS });
      if (stale.length === 0) return;
      await analyze(stale.map((table) => table.name)).affectedRows(database.prisma, {});
      // SKIP_LOCKED: PostgreSQL skips a table another session holds (with a warning in its own log).
      log.info(
        { tables: stale.map((table) => table.name) },
        "analysing tables that outgrew their statistics, unless locked",
      );
    },
    done: "checked the claim's statistics",
    log,
  });
}
