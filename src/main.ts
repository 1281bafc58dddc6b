import "reflect-metadata";
import { createApp } from "./app";
import { loadConfigOrExit } from "./cli";
import { createLogger } from "./log";

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel);
  const app = await createApp(config, log);
  const url = await app.listen();
  log.info({ url, graphql: `${url}/graphql` }, "gateway listening");

  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    log.info({ signal }, "stopping: draining requests and websockets");
    app.stop().then(
      () => {
        log.info("stopped");
        process.exit(0);
      },
      (error: unknown) => {
        log.error({ err: error }, "unclean stop");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
