import type { SqlMigrationAwareDriverAdapterFactory } from "@prisma/driver-adapter-utils";
import pino from "pino";
import { PrismaClient } from "../../generated/prisma/client";
import { createStationService } from "../stations/station.service";
import { createStationStore } from "../stations/station.store";

/**
 * Loads what a first start loads into an empty database (the bundled station data set), through the
 * same service: for databases made ahead of a start — the build's embedded template
 * (db/embedded-template.ts) and the tests' templates.
 */
export async function loadBundledData(adapter: SqlMigrationAwareDriverAdapterFactory): Promise<void> {
  const prisma = new PrismaClient({ adapter });
  try {
    const stations = createStationService({ store: createStationStore(prisma), log: pino({ level: "silent" }) });
    await stations.start({ refreshIntervalMs: 0 });
    await stations.stop();
  } finally {
    await prisma.$disconnect();
  }
}
