import { lstat, mkdtemp, readdir, rm } from "node:fs/promises";
import { statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { processAlive } from "../../src/db/data-dir-lock";

/** Where the global setup hands the run's folder for embedded databases to the test workers. */
export const DATA_ROOT_ENV = "TEST_EMBEDDED_DATA_ROOT";

/** Free space below which tmpfs is not used: a database is about 41 MB and a worker may hold a dozen. */
const TMPFS_FREE_BYTES = 2 * 1024 ** 3;
const ROOT_NAME = /^cgw-test-data-(\d+)-/;

/**
 * Where the run's embedded databases live: on tmpfs when the machine has one with room (a test's
 * database then costs no disk writes), else in the temporary folder.
 */
function base(): string {
  try {
    const fs = statfsSync("/dev/shm");
    if (fs.bavail * fs.bsize >= TMPFS_FREE_BYTES) return "/dev/shm";
  } catch {
    // no tmpfs here
  }
  return tmpdir();
}

/**
 * The run's own folder (the global setup makes it): made by mkdtemp, so its name is unguessable and
 * only its owner can enter it, and every database folder inside is made the same way.
 */
export async function makeRunDataRoot(): Promise<string> {
  await removeOrphanedRoots();
  return mkdtemp(path.join(base(), `cgw-test-data-${process.pid}-`));
}

/**
 * A new, empty folder of its own (never one an earlier test file had), and its removal. An app (or
 * `openDatabase`) given it starts as a new embedded database does for a user: as a copy of the
 * build's migrated template (db/embedded-template.ts), the path `npm start` runs, at a fraction of the
 * CPU of loading a dump into an in-memory database.
 */
export async function newEmbeddedDataDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  const root = process.env[DATA_ROOT_ENV];
  if (!root) throw new Error(`${DATA_ROOT_ENV} is not set: the global setup (jest.config.js) makes the run's folder`);
  const dir = await mkdtemp(path.join(root, "db-"));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Run folders left by runs that were killed (their process is gone): only real folders of this user,
 * never a link.
 */
async function removeOrphanedRoots(): Promise<void> {
  for (const folder of new Set(["/dev/shm", tmpdir()])) {
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const pid = Number(ROOT_NAME.exec(name)?.[1]);
      if (!Number.isInteger(pid) || pid === process.pid || processAlive(pid)) continue;
      const entry = path.join(folder, name);
      const stats = await lstat(entry).catch(() => undefined);
      if (!stats?.isDirectory() || stats.uid !== process.getuid?.()) continue;
      await rm(entry, { recursive: true, force: true });
    }
  }
}
