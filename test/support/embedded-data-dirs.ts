import { existsSync } from "node:fs";
import { mkdir, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { processAlive } from "../../src/db/data-dir-lock";

/**
 * Where the embedded databases of apps under test live: on tmpfs where the machine has one, so that a
 * test's database costs no disk writes, else in the temporary folder.
 */
const ROOT = path.join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "cgw-test-data");
const PREFIX = "run-";

let made = 0;

/**
 * A folder that holds no database yet, removed by `disposers` when the test file ends. An app (or
 * `openDatabase`) given it starts as a new embedded database does for a user: as a copy of the build's
 * migrated template (db/embedded-template.ts). That is a fraction of the CPU of loading a dump into
 * an in-memory database, and it runs the path `npm start` runs.
 */
export async function newEmbeddedDataDir(disposers: { add(dispose: () => Promise<void>): void }): Promise<string> {
  const dir = path.join(ROOT, `${PREFIX}${process.pid}`, String(++made));
  await mkdir(path.dirname(dir), { recursive: true });
  disposers.add(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Folders left by runs that were killed before their files ended (their process is gone). */
export async function removeOrphanedDataDirs(): Promise<void> {
  const entries = await readdir(ROOT).catch(() => [] as string[]);
  for (const name of entries) {
    const pid = Number(name.slice(PREFIX.length));
    if (!name.startsWith(PREFIX) || !Number.isInteger(pid) || processAlive(pid)) continue;
    await rm(path.join(ROOT, name), { recursive: true, force: true });
  }
}
