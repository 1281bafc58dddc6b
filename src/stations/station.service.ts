import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { PRISMA_DIR } from "../paths";
import { isIataCode } from "../domain/iata";
import { AppError, validationError } from "../errors";
import type { StationEntry } from "./station.snapshot";
import { StationSnapshot } from "./station.snapshot";
import type { StationStore } from "./station.store";
import { validateStationFile } from "./station.validate";

export const BUNDLED_STATIONS_FILE = path.join(PRISMA_DIR, "data", "stations.sample.json");
/** CONTRACT §10. */
export const MAX_CODES_PER_REQUEST = 100;
/** How often an instance checks whether another instance imported station data. */
export const DEFAULT_STATION_REFRESH_MS = 5_000;

export interface ImportResult {
  version: number;
  stationCount: number;
}

/**
 * Station reads are answered from an in-memory snapshot: station data changes only on import, so a
 * request never waits for the database. An import replaces the data in one transaction and rebuilds
 * the snapshot; other instances notice the new version by polling it.
 */
export function createStationService({ store, log }: { store: StationStore; log: Logger }) {
  let snapshot = new StationSnapshot(0, []);
  let refreshTimer: NodeJS.Timeout | undefined;
  let refreshing: Promise<void> | undefined;

  async function reload(): Promise<void> {
    const { version, records } = await store.loadAll();
    snapshot = new StationSnapshot(version, records);
  }

  function parseCode(value: unknown, field: string): string {
    if (!isIataCode(value)) {
      throw validationError([
        { field, message: `must be an IATA station code of three upper-case letters, got ${JSON.stringify(value)}` },
      ]);
    }
    return value;
  }

  return {
    /** Loads the snapshot; on an empty database first loads the bundled sample data set. */
    async start({ refreshIntervalMs = DEFAULT_STATION_REFRESH_MS, loadBundled = true } = {}): Promise<void> {
      if (loadBundled && (await store.version()) === 0) {
        const file = JSON.parse(await readFile(BUNDLED_STATIONS_FILE, "utf8")) as unknown;
        const result = validateStationFile(file);
        if (!result.ok)
          throw new Error(`The bundled station file is invalid: ${JSON.stringify(result.problems.slice(0, 5))}`);
        const version = await store.replaceAll(result.stations, { onlyIfEmpty: true });
        if (version !== null)
          log.info(
            { stations: result.stations.length, file: BUNDLED_STATIONS_FILE },
            "loaded the bundled station data set",
          );
      }
      await reload();
      if (refreshIntervalMs > 0) {
        refreshTimer = setInterval(() => {
          if (refreshing) return; // the last one is still reading
          refreshing = this.refreshIfStale()
            .then(() => undefined)
            .catch((error: unknown) => log.warn({ err: error }, "station snapshot refresh failed"))
            .finally(() => (refreshing = undefined));
        }, refreshIntervalMs);
        refreshTimer.unref();
      }
    },

    /** Stops the periodic refresh and waits for one still reading (the database closes after this). */
    async stop(): Promise<void> {
      clearInterval(refreshTimer);
      await refreshing;
    },

    /** Reloads the snapshot when the database holds a newer import; true when it did. */
    async refreshIfStale(): Promise<boolean> {
      const version = await store.version();
      if (version === snapshot.version) return false;
      await reload();
      log.info({ version, stations: snapshot.size }, "station snapshot refreshed");
      return true;
    },

    snapshot(): StationSnapshot {
      return snapshot;
    },

    parseCode,

    /** The station, or STATION_NOT_FOUND. */
    get(code: unknown, field = "code"): StationEntry {
      const parsed = parseCode(code, field);
      const entry = snapshot.get(parsed);
      if (!entry)
        throw new AppError("STATION_NOT_FOUND", `No station ${parsed}`, { extensions: { unknownCodes: [parsed] } });
      return entry;
    },

    /** Whether a code is one of the carrier's stations (a milestone may only be at one). */
    isStation(code: string): boolean {
      return snapshot.get(code) !== undefined;
    },

    /** A station's IANA time zone, or null when the station or its zone is not known. */
    timeZoneOf(code: string): string | null {
      return snapshot.get(code)?.view.timeZone ?? null;
    },

    /** The station or null (GraphQL's `station(code)`); a malformed code is still an error. */
    find(code: unknown, field = "code"): StationEntry | null {
      return snapshot.get(parseCode(code, field)) ?? null;
    },

    /** Validates a list of codes: present, 1 to 100 of them, each well-formed; duplicates collapsed, order kept. */
    parseCodeList(value: unknown, field = "stationCodes"): string[] {
      if (!Array.isArray(value)) throw validationError([{ field, message: "must be an array of IATA station codes" }]);
      if (value.length === 0) throw validationError([{ field, message: "must hold at least one code" }]);
      if (value.length > MAX_CODES_PER_REQUEST)
        throw validationError([
          { field, message: `must hold at most ${MAX_CODES_PER_REQUEST} codes, got ${value.length}` },
        ]);
      const problems = value.flatMap((code, i) =>
        isIataCode(code)
          ? []
          : [{ field: `${field}[${i}]`, message: `must be three upper-case letters, got ${JSON.stringify(code)}` }],
      );
      if (problems.length > 0) throw validationError(problems);
      return [...new Set(value as string[])];
    },

    /** Every asked station in order, or STATION_NOT_FOUND naming every unknown code. */
    getMany(codes: readonly string[]): StationEntry[] {
      const unknown = codes.filter((c) => !snapshot.get(c));
      if (unknown.length > 0) {
        throw new AppError("STATION_NOT_FOUND", `No station ${unknown.join(", ")}`, {
          extensions: { unknownCodes: unknown },
        });
      }
      return codes.map((c) => snapshot.get(c)!);
    },

    /** Validates and replaces the whole data set; nothing is written when any record is bad. */
    async importStations(input: unknown): Promise<ImportResult> {
      const result = validateStationFile(input);
      if (!result.ok) {
        throw new AppError(
          "VALIDATION_FAILED",
          `The station file has ${result.problems.length} problem(s); nothing was imported`,
          { errors: result.problems },
        );
      }
      const version = (await store.replaceAll(result.stations))!;
      await reload();
      log.info({ version, stations: result.stations.length }, "imported station data");
      return { version, stationCount: result.stations.length };
    },
  };
}

export type StationService = ReturnType<typeof createStationService>;
