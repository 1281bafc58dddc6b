import "reflect-metadata";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createSecretBox, loadSecretsKey } from "./clients/secret-box";
import { prepareSecrets } from "./clients/prepare-secrets";
import { createSigningSecretStore } from "./clients/signing-secret-store";
import { exitAfterLog, loadConfigOrExit } from "./cli";
import { openDatabase } from "./db/database";
import { registerInstance } from "./db/instance-registry";
import { sharedSettings, WORKER_ROLE } from "./composition/shared-settings";
import { createDeliveryMetrics } from "./delivery/delivery.metrics";
import { createOneRecordTokens, startDeliveryWorker } from "./delivery/delivery.runtime";
import { partnerServersOf } from "./onerecord/partners/partner-servers";
import { createDeliveryStore } from "./delivery/delivery.store";
import { DisposerStack } from "./composition/disposer-stack";
import { createLogger, SERVICE } from "./log";
import { createGuardedAgent } from "./outbound/guarded-agent";
import { inspectorOpen, STOP_DEADLINE_MS, startProcessWatchdog } from "./process-watchdog";

/**
 * `npm run worker`: a delivery worker without the API, for deployments that scale delivery apart
 * from it (PostgreSQL only: the embedded database belongs to one process). It serves /healthz,
 * /readyz and /metrics on WORKER_PORT so it can be supervised and scraped like the gateway.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, { traceIds: config.tracing !== undefined });
  if (!config.databaseUrl) {
    log.error(
      "npm run worker needs DATABASE_URL: the embedded database is served by the gateway process, whose worker delivers",
    );
    process.exit(2);
  }
  // Each resource goes on the stack as it opens: a failed start, like a stop, closes what is open.
  const stack = new DisposerStack(log);
  const started = await (async () => {
    // First, so that it is stopped last: the sends finishing during the stop are still exported.
    if (config.tracing) {
      // The OpenTelemetry SDK is loaded only when tracing is on.
      const { startTracing } = await import("./tracing/tracing.js");
      const tracing = startTracing(config.tracing, log);
      stack.defer("tracing", () => tracing.stop());
    }
    const database = await openDatabase({ kind: "postgres", url: config.databaseUrl! });
    stack.defer("database", () => database.close());
    const secretsKey = loadSecretsKey(config).key;
    // Refuses to start with settings that differ from the running instances' (docs/DEPLOYMENT.md).
    const instance = await registerInstance(database.sql, {
      kind: "worker",
      settings: sharedSettings(config, WORKER_ROLE, secretsKey),
      log,
    });
    stack.defer("instances", () => instance.close());
    const store = createDeliveryStore(database.sql);
    const agent = createGuardedAgent({ allowPrivate: config.allowPrivateCallbacks });
    stack.defer("callback-agent", () => agent.close());
    const secrets = createSecretBox(secretsKey);
    await prepareSecrets({ prisma: database.prisma, log, secrets });
    const clients = createSigningSecretStore({ prisma: database.prisma, secrets });
    const metrics = createDeliveryMetrics(store);
    const tokens = createOneRecordTokens(config, metrics, log, { sends: true });
    const partners = partnerServersOf(database.prisma);
    const worker = startDeliveryWorker({
      config,
      store,
      clients,
      dispatcher: agent,
      metrics,
      log,
      tokens,
      partnerOf: (url) => partners.targetOf(url),
    });
    stack.defer("delivery-worker", () => worker.stop());
    return { database, metrics, worker };
  })().catch(async (error: unknown) => {
    await stack.dispose().catch(() => {});
    throw error;
  });
  const { database, metrics, worker } = started;

  const json = (res: http.ServerResponse, status: number, body: unknown) =>
    res
      .writeHead(status, { "content-type": "application/json; charset=utf-8", "x-content-type-options": "nosniff" })
      .end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if (req.method !== "GET") return json(res, 405, { status: 405, title: "Method Not Allowed" });
    if (path === "/healthz") return json(res, 200, { status: "ok" });
    if (path === "/readyz") {
      void database.ping().then((up) =>
        json(res, up ? 200 : 503, {
          status: up ? "ready" : "unavailable",
          database: up ? "up" : "down",
          wakeups: worker.wakeups(),
        }),
      );
      return;
    }
    if (path === "/metrics") {
      metrics.registry.metrics().then(
        (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
        () => json(res, 503, { status: 503, title: "Metrics unavailable" }),
      );
      return;
    }
    json(res, 404, { status: 404, title: "Not Found" });
  });
  await new Promise<void>((resolve, reject) =>
    server.once("error", reject).listen(config.workerPort, config.host, resolve),
  ).catch(async (error: unknown) => {
    await stack.dispose().catch(() => {}); // WORKER_PORT taken: close the worker, agent and database first
    throw error;
  });
  stack.defer(
    "http",
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  );
  const { address, port } = server.address() as AddressInfo;
  log.info({ url: `http://${address}:${port}` }, "delivery worker running");
  // As in main.ts: a blocked event loop, or a stop past its deadline, ends the process all the same.
  const watchdog = startProcessWatchdog({
    stallMs: (await inspectorOpen()) ? 0 : STOP_DEADLINE_MS,
    service: SERVICE,
    onError: (error) => log.warn({ err: error }, "the process watchdog failed; running without it"),
  });

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    log.info("stopping: finishing the sends in flight");
    // A receiver that does not answer could hold a send for its whole 10 s: what was not recorded is sent again later.
    const deadline = watchdog.stopWithin(STOP_DEADLINE_MS, () => {
      log.error({ afterMs: STOP_DEADLINE_MS }, "stopping took too long; exiting without waiting for the rest");
      process.exit(1);
    });
    await stack.dispose().then(
      () => {
        log.info("stopped");
        return exitAfterLog(log, 0, deadline);
      },
      (error: unknown) => {
        log.error({ err: error }, "stopping failed");
        return exitAfterLog(log, 1, deadline);
      },
    );
  };
  // `on`, not `once`: a second signal while the stop goes on (or waits for the log) must not kill the process.
  process.on("SIGTERM", () => void stop());
  process.on("SIGINT", () => void stop());
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
