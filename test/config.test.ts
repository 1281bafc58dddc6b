import { ConfigError, loadConfig } from "../src/config";

describe("configuration", () => {
  it("has the contract's defaults when nothing is set", () => {
    const config = loadConfig({}, "/srv/gw");
    expect(config).toEqual({
      port: 8080,
      workerPort: 8081,
      host: "127.0.0.1",
      databaseUrl: undefined,
      dataDir: "/srv/gw/data",
      redisUrl: undefined,
      amqp: undefined,
      carrierSegment: "carrier",
      bootstrap: { apiKey: undefined, signingSecret: undefined, callbackPrefixes: ["*"] },
      allowPrivateCallbacks: false,
      trustProxy: [],
      awbCheckDigit: "off",
      logLevel: "info",
      oneRecord: {
        basePath: "/onerecord",
        baseUrl: undefined,
        delegationQuota: { objectsPerRequester: 20_000, delegatesPerObject: 50 },
        applyHolderChanges: false,
        subscribeTo: "any",
        thirdPartySubscribers: "any",
        changeRequestQuota: { perDay: 1_000, bytesPerDay: 16 * 1024 * 1024 },
        objectQuota: { perDay: 20_000, bytesPerDay: 256 * 1024 * 1024 },
        eventQuota: { perDay: 50_000, bytesPerDay: 128 * 1024 * 1024 },
        notificationQuota: { perDay: 5_000, bytesPerDay: 50 * 1024 * 1024 },
        oidc: undefined,
        organizationName: "Carrier",
        proposalIntervalMs: 10_000,
      },
      graphqlIntrospection: true,
      graphqlLimits: {
        maxDepth: 12,
        maxCost: 300_000,
        maxAliases: 30,
        maxListArgument: 1_000,
        maxBatch: 10,
        timeLimitMs: 10_000,
        maxTokens: 2_000,
      },
      graphqlOperationsFile: undefined,
      secretsKey: undefined,
      stationRefreshMs: 5000,
      graphqlResponseCache: true,
      rateLimitPerSecond: 200,
      rateLimitBurst: 400,
      authFailureLimitPerSecond: 10,
      authFailureLimitBurst: 20,
      graphqlAnonymousLimitPerSecond: 20,
      graphqlAnonymousLimitBurst: 40,
      limitsRedisTimeoutMs: 250,
      liveMaxQueuedEvents: 10000,
      liveMaxConnectionsPerKey: 50,
      liveConnectionLeaseMs: 30_000,
      liveKeyRecheckMs: 5_000,
      liveKeepAliveMs: 12_000,
      liveMaxSubscriptionsPerSocket: 100,
      deliveryWorker: true,
      embeddedVacuumRows: 20_000,
      delivery: {
        concurrency: 64,
        perOrigin: 8,
        pollMs: 500,
        leaseMs: 30_000,
        sendBudgetMs: 12_000,
        retrySchedule: [
          5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 21_600_000, 36_000_000,
        ],
        circuit: { failures: 10, openMs: 30_000, maxOpenMs: 600_000 },
        disableAfterHours: 120,
      },
      retention: {
        ages: {
          delivered_deliveries: 30,
          dead_deliveries: 90,
          events: 365,
          carrier_statuses: 365,
          expired_subscriptions: 30,
          onerecord_subscriptions: 30,
          onerecord_proposals: 30,
          onerecord_notifications_received: 30,
          onerecord_access_delegations: 30,
        },
        intervalMs: 300_000,
        batchSize: 1_000,
      },
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads every variable", () => {
    const config = loadConfig({
      PORT: "9090",
      HOST: "0.0.0.0",
      DATABASE_URL: "postgres://u@db:5432/gw",
      DATA_DIR: "memory://",
      REDIS_URL: "redis://cache:6379",
      CARRIER_SEGMENT: "lh",
      BOOTSTRAP_API_KEY: "k".repeat(32),
      BOOTSTRAP_SIGNING_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
      BOOTSTRAP_CALLBACK_PREFIXES: "https://a.example/hooks/, https://b.example/",
      ALLOW_PRIVATE_CALLBACKS: "true",
      AWB_CHECK_DIGIT: "enforce",
      AUTH_FAILURE_LIMIT_PER_SECOND: "0",
      AUTH_FAILURE_LIMIT_BURST: "5",
    });
    expect(config).toMatchObject({
      port: 9090,
      host: "0.0.0.0",
      databaseUrl: "postgres://u@db:5432/gw",
      dataDir: "memory://",
      redisUrl: "redis://cache:6379",
      carrierSegment: "lh",
      bootstrap: { callbackPrefixes: ["https://a.example/hooks/", "https://b.example/"] },
      allowPrivateCallbacks: true,
      awbCheckDigit: "enforce",
      authFailureLimitPerSecond: 0,
      authFailureLimitBurst: 5,
    });
  });

  it("reads the broker settings, only with AMQP_URL, with the dead-letter queue named after the queue", () => {
    expect(loadConfig({ AMQP_QUEUE: "ignored" }).amqp).toBeUndefined();
    expect(loadConfig({ AMQP_URL: "amqp://u:p@mq:5672/cargo" }).amqp).toEqual({
      url: "amqp://u:p@mq:5672/cargo",
      queue: "cargo.milestones",
      deadLetterQueue: "cargo.milestones.dead",
      prefetch: 500,
    });
    const amqp = loadConfig({ AMQP_URL: "amqps://mq", AMQP_QUEUE: "lh.fsu", AMQP_PREFETCH: "200" }).amqp;
    expect(amqp).toMatchObject({ queue: "lh.fsu", deadLetterQueue: "lh.fsu.dead", prefetch: 200 });
    expect(loadConfig({ AMQP_URL: "amqp://mq", AMQP_DEAD_LETTER_QUEUE: "poison" }).amqp?.deadLetterQueue).toBe(
      "poison",
    );
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ AMQP_PREFETCH: "0" }, /AMQP_PREFETCH must be between 1 and 10000/],
      [{ AMQP_QUEUE: "amq.direct" }, /AMQP_QUEUE must be a queue name .* not starting with "amq\."/],
      [{ AMQP_QUEUE: "q".repeat(256) }, /AMQP_QUEUE must be a queue name of up to 255/],
      [{ AMQP_QUEUE: "q", AMQP_DEAD_LETTER_QUEUE: "q" }, /AMQP_DEAD_LETTER_QUEUE must differ from AMQP_QUEUE/],
    ];
    for (const [env, message] of refusals) expect(() => loadConfig({ AMQP_URL: "amqp://mq", ...env })).toThrow(message);
  });

  it.each([
    ["PORT", "eighty", /PORT must be a whole number/],
    ["PORT", "70000", /PORT must be between 0 and 65535/],
    ["DATABASE_URL", "mysql://x@y/z", /DATABASE_URL must start with postgres:\/\//],
    ["DATABASE_URL", "not a url", /DATABASE_URL is not a URL/],
    ["REDIS_URL", "http://cache", /REDIS_URL must start with redis:\/\//],
    ["AMQP_URL", "http://broker", /AMQP_URL must start with amqp:\/\/ or amqps:\/\//],
    ["CARRIER_SEGMENT", "a/b", /CARRIER_SEGMENT must be one path segment/],
    ["ALLOW_PRIVATE_CALLBACKS", "yes", /ALLOW_PRIVATE_CALLBACKS must be true or false/],
    ["AWB_CHECK_DIGIT", "strict", /AWB_CHECK_DIGIT must be one of off, enforce/],
    ["BOOTSTRAP_SIGNING_SECRET", "secret", /BOOTSTRAP_SIGNING_SECRET must be "whsec_"/],
    ["BOOTSTRAP_API_KEY", "short", /BOOTSTRAP_API_KEY must be 16 to 256/],
    ["BOOTSTRAP_CALLBACK_PREFIXES", "ftp://x", /BOOTSTRAP_CALLBACK_PREFIXES has "ftp:\/\/x"/],
    ["DELIVERY_RETRY_SCHEDULE", "5s,soon", /DELIVERY_RETRY_SCHEDULE must be comma-separated durations/],
    ["DELIVERY_LEASE_MS", "14999", /DELIVERY_LEASE_MS must be between 15000/],
    ["DELIVERY_PER_ORIGIN", "65", /DELIVERY_PER_ORIGIN is 65, more than DELIVERY_CONCURRENCY \(64\)/],
    ["LIVE_KEY_RECHECK_MS", "50", /LIVE_KEY_RECHECK_MS must be between 100/],
    ["LIVE_KEEP_ALIVE_MS", "999", /LIVE_KEEP_ALIVE_MS must be between 1000/],
    ["AUTH_FAILURE_LIMIT_BURST", "0", /AUTH_FAILURE_LIMIT_BURST must be between 1/],
    ["EMBEDDED_VACUUM_ROWS", "10000001", /EMBEDDED_VACUUM_ROWS must be between 0 and 10000000/],
  ])("fails fast naming %s when it is %p", (variable, value, message) => {
    let thrown: unknown;
    try {
      loadConfig({ [variable]: value });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).variable).toBe(variable);
    expect((thrown as ConfigError).message).toMatch(message);
  });
});
