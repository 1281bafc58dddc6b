import { PGlite } from "@electric-sql/pglite";

/** An empty cluster's data folder (PGlite's dumpDataDir), made once per process (under Jest, once per module registry). */
let emptyCluster: Promise<Blob> | undefined;

/**
 * A new, empty in-memory embedded database for work that is thrown away (a schema diff's scratch and
 * shadow databases). The cluster is initialised once and each database starts from a copy of it:
 * PGlite's initdb costs seconds of CPU, a copy a fraction of one. A failed initialisation is not
 * kept: the next call tries again.
 */
export async function throwawayPGlite(): Promise<PGlite> {
  emptyCluster ??= initialiseEmptyCluster().catch((error: unknown) => {
    emptyCluster = undefined;
    throw error;
  });
  return new PGlite("memory://", { loadDataDir: await emptyCluster });
}

async function initialiseEmptyCluster(): Promise<Blob> {
  const pglite = new PGlite("memory://");
  try {
    return await dumpDataDir(pglite);
  } finally {
    await pglite.close();
  }
}

/** The database's data folder as PGlite's uncompressed dump (loadDataDir takes it back). */
export async function dumpDataDir(pglite: PGlite): Promise<Blob> {
  await pglite.waitReady; // dumpDataDir does not wait for the start itself: it would never settle
  return pglite.dumpDataDir("none");
}
