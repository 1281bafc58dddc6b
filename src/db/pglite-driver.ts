import type { Driver } from "./driver";
import { startPGliteThread } from "./pglite-remote";

/**
 * PostgreSQL's own cache inside the embedded database's WebAssembly memory (PGlite's default is
 * 128MB, all of it resident once touched). Under sustained load the delivery table's indexes outgrow
 * a small one, and every statement then reads pages through PGlite's file system: at 16MB, under
 * 2,000 milestones a second, delivery fell from about 1,900 to 842 a second within two minutes (300
 * in its lowest 10 s window); at 64MB it stayed above 1,000 for the 200 s measured (BENCHMARKS.md
 * "Sustained delivery"), for 40–60 MiB more resident memory at idle ("Footprint").
 */
const PGLITE_SHARED_BUFFERS = "64MB";

/**
 * The embedded database in `dataDir` ("memory://": in memory; `dump`: its starting contents), run on a
 * thread of its own (pglite-remote.ts): its statements take the second core, not the gateway's loop.
 */
export function openPGliteDriver(dataDir: string, dump: Blob | undefined): Driver {
  const remote = startPGliteThread({
    dataDir,
    dump,
    // As a start parameter: PGlite's `postgresqlconf` option would rewrite DATA_DIR/postgresql.conf.
    startParams: ["-c", `shared_buffers=${PGLITE_SHARED_BUFFERS}`],
  });
  return {
    factory: remote.factory,
    migrationFactory: remote.factory,
    // PGlite runs one query at a time (its own queue): these statements take turns with Prisma's.
    sql: remote.sql,
    close: () => remote.close(),
  };
}
