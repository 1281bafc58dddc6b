// npm run stations:import -- <file.json>
// Validates a carrier's station file and replaces the station data set in one transaction. Uses the
// same configuration as the server (DATABASE_URL, or the embedded database under DATA_DIR). Running
// servers pick up the new data within STATION_REFRESH_MS. Exit codes: 0 imported, 1 rejected, 2 usage.
import "reflect-metadata";
import { readFile } from "node:fs/promises";
import { loadConfigOrExit, printProblems, runCli } from "../src/cli";
import { openConfiguredDatabase } from "../src/db/database";
import { AppError } from "../src/errors";
import { createLogger } from "../src/log";
import { createStationService } from "../src/stations/station.service";
import { createStationStore } from "../src/stations/station.store";

async function main(): Promise<number> {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: npm run stations:import -- <file.json>");
    return 2;
  }
  let input: unknown;
  try {
    input = JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    console.error(`Cannot read ${file}: ${(error as Error).message}`);
    return 1;
  }
  const config = loadConfigOrExit(process.env);
  const database = await openConfiguredDatabase(
    config,
    "stop it and run this again, or use its GraphQL mutation importStations (scope admin)",
  );
  try {
    const stations = createStationService({ store: createStationStore(database.prisma), log: createLogger("warn") });
    const result = await stations.importStations(input);
    console.log(`Imported ${result.stationCount} stations (data version ${result.version}).`);
    return 0;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    printProblems(error, `${file}: `);
    return 1;
  } finally {
    await database.close();
  }
}

runCli(main);
