import "reflect-metadata";
import type { App } from "./app";
import { databaseKindOf, exitAfterLog, loadConfigOrExit, printFirstStart } from "./cli";
import { DATA_DIR_TAKEN, openConfiguredDatabase } from "./db/database";
import { CliError } from "./errors";
import type { Config } from "./config";
import { createLogger, SERVICE } from "./log";
import { inspectorOpen, STOP_DEADLINE_MS, startProcessWatchdog } from "./process-watchdog";

/**
 * `npm start` (through `exec`, so this process is the one a supervisor signals): starts the gateway,
 * and stops it cleanly on SIGTERM or SIGINT. A start that cannot work (the data folder or the port
 * taken) says so in one line and exits 1.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel, undefined, { traceIds: config.tracing !== undefined });
  // A signal while starting ends the process at once (as Node's default would), but through
  // process.exit, so that the log's buffer is written out; a clean stop needs a started app.
  const exitWhileStarting = (signal: NodeJS.Signals) => {
    log.warn({ signal }, "stopped while starting");
    process.exit(1);
  };
  process.once("SIGTERM", exitWhileStarting);
  process.once("SIGINT", exitWhileStarting);
  let app: App;
  let url: string;
  // The database first, and the rest of the gateway loaded while the embedded one boots on its thread
  // (loading blocks this thread: the folder's lock is taken and the thread started before it).
  let driverStarted!: () => void;
  const started = new Promise<void>((resolve) => (driverStarted = resolve));
  const openingDatabase = openConfiguredDatabase(config, DATA_DIR_TAKEN, undefined, driverStarted);
  // Waited for until its thread starts, or it fails: createApp, which awaits it, reports the failure.
  const settled = openingDatabase.then(
    () => {},
    () => {},
  );
  await Promise.race([started, settled]);
  try {
    const { createApp } = await import("./app.js");
    app = await createApp(config, log, { openingDatabase });
  } catch (error) {
    if (error instanceof CliError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  try {
    url = await listenOrExplain(app, config);
  } catch (error) {
    // The first client was created before the port turned out to be taken: show its credentials
    // now, or they would never be shown (later starts find the client and create none).
    if (app.bootstrap.created) printFirstStart(app.bootstrap, { notListening: true }, databaseKindOf(config));
    if (error instanceof CliError) {
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  if (config.oneRecord.baseUrl === undefined && !isLoopback(url))
    log.warn(
      { oneRecord: `${url}${config.oneRecord.basePath}` },
      "ONE_RECORD_BASE_URL is not set: ONE Record URIs name the listening address, which partners may not reach; set it to the URL they use",
    );
  log.info({ url, graphql: `${url}/graphql` }, "gateway listening");
  if (app.bootstrap.created) printFirstStart(app.bootstrap, { url }, databaseKindOf(config));
  // Ends the process should its event loop stop turning (it could not even see SIGTERM then) or a
  // stop overrun its deadline; not while a debugger is attached, which pauses the loop on purpose.
  const watchdog = startProcessWatchdog({
    stallMs: (await inspectorOpen()) ? 0 : STOP_DEADLINE_MS,
    service: SERVICE,
    onError: (error) => log.warn({ err: error }, "the process watchdog failed; running without it"),
  });

  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, "stopping: draining requests and websockets");
    // A supervisor expects a stop within seconds; a receiver that does not answer could hold a send
    // for its whole 10 s. Past the deadline, exit: what was not recorded is sent again later.
    // The watchdog enforces it even should the stop leave the event loop no turn to run a timer.
    const deadline = watchdog.stopWithin(STOP_DEADLINE_MS, () => {
      log.error({ afterMs: STOP_DEADLINE_MS }, "stopping took too long; exiting without waiting for the rest");
      process.exit(1);
    });
    app.stop().then(
      () => {
        log.info("stopped");
        void exitAfterLog(log, 0, deadline);
      },
      (error: unknown) => {
        log.error({ err: error }, "unclean stop");
        void exitAfterLog(log, 1, deadline);
      },
    );
  };
  process.off("SIGTERM", exitWhileStarting);
  process.off("SIGINT", exitWhileStarting);
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

/** A listening URL only this machine reaches: its URIs are a developer's, not partners'. */
function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host.startsWith("127.") || host === "[::1]";
}

async function listenOrExplain(app: App, config: Config): Promise<string> {
  try {
    return await app.listen();
  } catch (error) {
    await app.stop().catch(() => {}); // release the data folder and connections before exiting
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE")
      throw new CliError(
        `Port ${config.port} on ${config.host} is in use (another gateway, or another program): stop it, or start this one with another PORT.`,
      );
    if (code === "EADDRNOTAVAIL")
      throw new CliError(
        `HOST ${config.host} is not an address of this machine: set HOST to one (127.0.0.1, or 0.0.0.0 for every interface).`,
      );
    throw error;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
