import "reflect-metadata";
import { createSecretBox, loadSecretsKey } from "./clients/secret-box";
import { createClientService } from "./clients/client.service";
import { loadConfigOrExit } from "./cli";
import { openDatabase } from "./db/database";
import { createDeliveryMetrics } from "./delivery/delivery.metrics";
import { startDeliveryWorker } from "./delivery/delivery.runtime";
import { createDeliveryStore } from "./delivery/delivery.store";
import { createLogger } from "./log";
import { createGuardedAgent } from "./outbound/guarded-agent";

/**
 * `npm run worker`: a delivery worker without the HTTP server, for deployments that scale delivery
 * apart from the API (PostgreSQL only: the embedded database belongs to one process).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const log = createLogger(config.logLevel);
  if (!config.databaseUrl) {
    log.error("npm run worker needs DATABASE_URL: the embedded database is served by the gateway process, whose worker delivers");
    process.exit(2);
  }
  const database = await openDatabase({ kind: "postgres", url: config.databaseUrl });
  const store = createDeliveryStore(database.prisma);
  const agent = createGuardedAgent({ allowPrivate: config.allowPrivateCallbacks });
  const clients = createClientService({ prisma: database.prisma, log, secrets: createSecretBox(loadSecretsKey(config).key) });
  await clients.prepareSecrets();
  const worker = startDeliveryWorker({ config, store, clients, dispatcher: agent, metrics: createDeliveryMetrics(store), log });
  log.info("delivery worker running");
  const stop = async () => {
    await worker.stop();
    await agent.close();
    await database.close();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop());
  process.once("SIGINT", () => void stop());
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
