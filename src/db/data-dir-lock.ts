import { randomUUID } from "node:crypto";
import { link, open, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const LOCK_FILE = "gateway.lock";
/** Held only while a stale lock is replaced (a few file operations). */
const TAKEOVER_FILE = `${LOCK_FILE}.takeover`;
/** A lock file without a valid pid (written by an older version, or cut short) counts as held until this old. */
export const UNREADABLE_LOCK_STALE_MS = 5_000;
/** How long lockDataDir keeps trying while others take over, before it gives up. */
const GIVE_UP_MS = 30_000;

/** Another live process holds the embedded database's folder. What to do depends on who asks (cli.ts). */
export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`The embedded database in ${dataDir} is in use by process ${pid}`);
  }
}

/** Lock files this process holds now: a file naming our own pid is ours only if listed here. */
const heldHere = new Set<string>();

/** Whether a process with this pid runs (EPERM: it does, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;

type Seen = { state: "gone" } | { state: "held"; pid: number } | { state: "stale"; ino: bigint } | { state: "young" };

/** What a lock file says now: its inode and its content read through one handle, so they agree. */
async function inspect(file: string): Promise<Seen> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch (error) {
    if (code(error) === "ENOENT") return { state: "gone" };
    throw error;
  }
  try {
    const info = await handle.stat({ bigint: true });
    const text = (await handle.readFile("utf8")).trim();
    const pid = /^[1-9][0-9]*$/.test(text) ? Number(text) : 0;
    if (pid > 0 && Number.isSafeInteger(pid)) {
      // Our own pid in a file we do not hold: left by an earlier process that had the same pid
      // (containers restart with the same one).
      const held = pid === process.pid ? heldHere.has(file) : processAlive(pid);
      return held ? { state: "held", pid } : { state: "stale", ino: info.ino };
    }
    const age = Date.now() - Number(info.mtimeMs);
    return age < UNREADABLE_LOCK_STALE_MS ? { state: "young" } : { state: "stale", ino: info.ino };
  } finally {
    await handle.close();
  }
}

/**
 * Removes a stale takeover file: renamed to a unique name (only one contender can move a given file),
 * then checked to be the file judged stale; a live one moved by mistake is put back.
 */
async function breakStale(file: string, ino: bigint): Promise<void> {
  const grave = `${file}.stale-${process.pid}-${randomUUID()}`;
  try {
    await rename(file, grave);
  } catch (error) {
    if (code(error) === "ENOENT") return;
    throw error;
  }
  const moved = await stat(grave, { bigint: true });
  if (moved.ino !== ino) await link(grave, file).catch(() => {});
  await rm(grave, { force: true });
}

/**
 * PGlite is a single-process database: two processes opening one data folder corrupt it. The first
 * to open the folder holds this lock; a second gets a clear error instead. A lock left by a process
 * that no longer runs is taken over.
 *
 * Atomic at each step: the lock file is written complete under a unique name and then hard-linked to
 * the lock's name (link fails if that exists), so nobody ever reads a half-written lock. A stale lock
 * is replaced only by the holder of a second lock (the takeover file, taken the same way), which
 * checks again that the lock is the stale file it saw and renames its own complete file over it — so
 * two contenders that both saw a stale lock cannot both win, and a fresh lock is never removed.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, LOCK_FILE);
  const takeover = path.join(dataDir, TAKEOVER_FILE);
  const mine = path.join(dataDir, `${LOCK_FILE}.${process.pid}-${randomUUID()}`);
  await writeFile(mine, String(process.pid), { flag: "wx" });
  const { ino } = await stat(mine, { bigint: true });
  const acquired = () => {
    heldHere.add(file);
    return async () => {
      heldHere.delete(file);
      // Only our own file: never a lock another process took after ours was (wrongly) judged stale.
      const now = await stat(file, { bigint: true }).catch(() => undefined);
      if (now?.ino === ino) await rm(file, { force: true });
    };
  };
  const deadline = Date.now() + GIVE_UP_MS;
  try {
    while (Date.now() < deadline) {
      try {
        await link(mine, file);
        return acquired();
      } catch (error) {
        if (code(error) !== "EEXIST") throw error;
      }
      const seen = await inspect(file);
      if (seen.state === "held") throw new DataDirInUseError(dataDir, seen.pid);
      if (seen.state === "young") await sleep(50);
      if (seen.state !== "stale") continue;

      try {
        await link(mine, takeover);
      } catch (error) {
        if (code(error) !== "EEXIST") throw error;
        const guard = await inspect(takeover);
        if (guard.state === "stale") await breakStale(takeover, guard.ino);
        else await sleep(10);
        continue;
      }
      heldHere.add(takeover);
      try {
        const again = await inspect(file);
        if (again.state === "held") throw new DataDirInUseError(dataDir, again.pid);
        if (again.state === "stale" && again.ino === seen.ino) {
          await rename(mine, file);
          return acquired();
        }
      } finally {
        heldHere.delete(takeover);
        await rm(takeover, { force: true });
      }
    }
    throw new Error(`Could not lock ${dataDir}`);
  } finally {
    await rm(mine, { force: true });
  }
}
