import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import type { Config } from "./config";
import type { Database } from "./db/database";
import type { RunningDeliveryWorker } from "./delivery/delivery.runtime";
import type { Services } from "./services";
import { type BeforeStep, buildServices, type Core } from "./composition/build-services";
import { DisposerStack } from "./composition/disposer-stack";
import { mountTransports } from "./composition/mount-transports";
import { listeningUrl } from "./http/listening-url";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

export interface App {
  readonly http: FastifyInstance;
  /** What the first start created (a client with every scope), with the credentials it generated. */
  readonly bootstrap: Core["bootstrap"];
  readonly database: Database;
  readonly services: Services;
  /** The delivery worker of this process, unless DELIVERY_WORKER=false. */
  readonly worker: RunningDeliveryWorker | undefined;
  /** Retention: deletes what outlived its age (runOnce runs it now). */
  readonly retention: Core["retention"];
  /** The URL the server listens on, once started. */
  url(): string;
  listen(): Promise<string>;
  /**
   * Closes everything the start opened, in reverse: websockets (1001), the live streams, then HTTP
   * drains its in-flight requests and Apollo stops, then the worker, Redis, the callback agent, the
   * station refresh and the database. Safe to call twice.
   */
  stop(): Promise<void>;
}

export interface AppOptions {
  /** Called before each start step (`START_STEPS`); a throw fails the start there. For tests. */
  beforeStep?: BeforeStep;
  /** With tracing on (config.tracing): spans go to this exporter as they end, not over OTLP. For tests. */
  spanExporter?: SpanExporter;
  /**
   * For an in-memory embedded database (DATA_DIR=memory://): its starting contents, a PGlite data-dir
   * dump, instead of a new cluster. For tests: every app starts from one migrated dump.
   */
  embeddedDatabaseDump?: Blob;
  /**
   * An open database to build on instead of opening the configured one. Its owner closes it: `stop`
   * leaves it open. For tests: one embedded database serves test files one after another.
   */
  database?: Database;
  /**
   * The configured database, already being opened (main.ts starts it before the rest of the gateway
   * loads, so the embedded one boots on its thread meanwhile). The app owns it: `stop`, or a failed
   * start, closes it.
   */
  openingDatabase?: Promise<Database>;
}

/**
 * The composition root: builds the services (composition/build-services.ts), then mounts the
 * transports on them (composition/mount-transports.ts). Every resource is put on one disposer stack as
 * it opens; a start that fails at any step closes what it had opened before the error reaches the
 * caller, and `stop` closes the rest the same way. Nothing below reads globals.
 */
export async function createApp(config: Config, log: Logger, options: AppOptions = {}): Promise<App> {
  const beforeStep = options.beforeStep ?? (() => {});
  const stack = new DisposerStack(log);
  let core: Core;
  let http: FastifyInstance;
  try {
    // First, so that it is stopped last: the spans of everything else's stop are still sent.
    if (config.tracing) {
      // The OpenTelemetry SDK (some 200 modules) is loaded only when tracing is on.
      const { startTracing } = await import("./tracing/tracing.js");
      const tracing = startTracing(config.tracing, log, options.spanExporter);
      stack.defer("tracing", () => tracing.stop());
    }
    core = await buildServices(config, log, stack, beforeStep, options);
    ({ http } = await mountTransports(core, config, log, stack, beforeStep));
  } catch (error) {
    await stack.dispose().catch(() => {}); // each failure is logged; the start's own error is the one to report
    throw error;
  }

  const url = () => listeningUrl(http.server);
  return {
    http,
    bootstrap: core.bootstrap,
    database: core.database,
    services: core.services,
    worker: core.worker,
    retention: core.retention,
    url,
    async listen() {
      await http.listen({ port: config.port, host: config.host });
      return url();
    },
    stop: () => stack.dispose(),
  };
}
