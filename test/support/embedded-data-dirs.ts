import { statfsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir, userInfo } from "node:os";
import path from "node:path";
import { processAlive } from "../../src/db/data-dir-lock";

/** Free space below which tmpfs is not used: a database is about 41 MB and a worker may hold a dozen. */
const TMPFS_FREE_BYTES = 2 * 1024 ** 3;

/**
 * Where the embedded databases of apps under test live: on tmpfs when the machine has one with room
 * (so a test's database costs no disk writes), else in the temporary folder. One folder per user.
 */
function root(): string {
  const free = (() => {
    try {
      const fs = statfsSync("/dev/shm");
      return fs.bavail * fs.bsize;
    } catch {
      return 0;
    }
  })();
  return path.join(free >= TMPFS_FREE_BYTES ? "/dev/shm" : tmpdir(), `cgw-test-data-${userInfo().uid}`);
}

const PREFIX = "run-";

/**
 * A new, empty folder of its own (never one an earlier test file had), removed by `disposers` when
 * they run. An app (or `openDatabase`) given it starts as a new embedded database does for a user: as
 * a copy of the build's migrated template (db/embedded-template.ts), the path `npm start` runs, at a
 * fraction of the CPU of loading a dump into an in-memory database.
 */
export async function newEmbeddedDataDir(disposers: { add(dispose: () => Promise<void>): void }): Promise<string> {
  const parent = path.join(root(), `${PREFIX}${process.pid}`);
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const dir = await mkdtemp(path.join(parent, "db-"));
  disposers.add(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Folders left by runs that were killed before their files ended (their process is gone). */
export async function removeOrphanedDataDirs(): Promise<void> {
  for (const base of ["/dev/shm", tmpdir()]) {
    const folder = path.join(base, `cgw-test-data-${userInfo().uid}`);
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const pid = Number(name.slice(PREFIX.length));
      if (!name.startsWith(PREFIX) || !Number.isInteger(pid) || processAlive(pid)) continue;
      await rm(path.join(folder, name), { recursive: true, force: true });
    }
  }
}
