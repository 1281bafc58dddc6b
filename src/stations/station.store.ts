import type { Prisma } from "../db/database";
import { advisoryXactLock, LOCK_KEYS } from "../db/sql/advisory-xact-lock.sql";
import type { Prisma as P } from "../../generated/prisma/client";
import type { StationRecord } from "./station.view";

/** Station rows in the database. The read path never comes here: it reads the in-memory snapshot. */
export function createStationStore(prisma: Prisma) {
  return {
    /** 0 until the first import. */
    async version(): Promise<number> {
      const row = await prisma.stationDataVersion.findUnique({ where: { id: 1 } });
      return row?.version ?? 0;
    },

    async loadAll(): Promise<{ version: number; records: StationRecord[] }> {
      const [version, rows] = await prisma.$transaction([
        prisma.stationDataVersion.findUnique({ where: { id: 1 } }),
        prisma.station.findMany({ orderBy: { code: "asc" } }),
      ]);
      return {
        version: version?.version ?? 0,
        records: rows.map((row) => ({
          code: row.code,
          name: row.name,
          freighterHandling: row.freighterHandling,
          passengerAircraftHandling: row.passengerAircraftHandling,
          truckHandling: row.truckHandling,
          countryShort: row.countryShort,
          countryLong: row.countryLong,
          timeZone: row.timeZone,
          import: row.importDetails as unknown as StationRecord["import"],
          export: row.exportDetails as unknown as StationRecord["export"],
          temperatureProducts: (row.temperatureProducts ?? null) as StationRecord["temperatureProducts"],
        })),
      };
    },

    /**
     * Replaces every station in one transaction and bumps the version. With `onlyIfEmpty`, does
     * nothing when an import already happened (first start of several instances at once).
     * Returns the new version, or null when skipped.
     */
    async replaceAll(records: readonly StationRecord[], { onlyIfEmpty = false } = {}): Promise<number | null> {
      return prisma.$transaction(
        async (tx) => {
          await advisoryXactLock.affectedRows(tx, { key: LOCK_KEYS.stationImport });
          const current = await tx.stationDataVersion.findUnique({ where: { id: 1 } });
          if (onlyIfEmpty && current) return null;
          await tx.station.deleteMany();
          await tx.station.createMany({
            data: records.map((r) => ({
              code: r.code,
              name: r.name,
              freighterHandling: r.freighterHandling,
              passengerAircraftHandling: r.passengerAircraftHandling,
              truckHandling: r.truckHandling,
              countryShort: r.countryShort,
              countryLong: r.countryLong,
              timeZone: r.timeZone,
              importDetails: r.import as unknown as P.InputJsonValue,
              exportDetails: r.export as unknown as P.InputJsonValue,
              temperatureProducts: (r.temperatureProducts ?? undefined) as P.InputJsonValue | undefined,
            })),
          });
          const next = await tx.stationDataVersion.upsert({
            where: { id: 1 },
            create: { id: 1, version: 1 },
            update: { version: { increment: 1 }, importedAt: new Date() },
          });
          return next.version;
        },
        { timeout: 60_000, maxWait: 10_000 },
      );
    },
  };
}

export type StationStore = ReturnType<typeof createStationStore>;
