import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import readline from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { DataDirInUseError, lockDataDir } from "../src/db/data-dir-lock";

const LOCK_JS = path.resolve(__dirname, "../dist/src/db/data-dir-lock.js");
const CONTENDERS = 8;

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.on("exit", resolve));
  return child.pid!;
}

/**
 * Child processes that each call lockDataDir(dir) once all are ready (a "go" line on stdin), report
 * "won" or "busy <pid>", and hold a won lock until their stdin closes.
 */
async function contendFromProcesses(dir: string, n: number): Promise<{ outcomes: string[]; children: ChildProcess[] }> {
  const script = `
    const readline = require("node:readline");
    const { lockDataDir, DataDirInUseError } = require(${JSON.stringify(LOCK_JS)});
    const lines = readline.createInterface({ input: process.stdin });
    process.stdout.write("ready\\n");
    lines.once("line", () => {
      lockDataDir(${JSON.stringify(dir)}).then(
        (unlock) => {
          process.stdout.write("won\\n");
          lines.once("close", () => unlock().then(() => process.exit(0)));
        },
        (error) => {
          process.stdout.write(error instanceof DataDirInUseError ? "busy " + error.pid + "\\n" : "error " + error.message + "\\n");
          process.exit(0);
        },
      );
    });`;
  const children = Array.from({ length: n }, () =>
    spawn(process.execPath, ["-e", script], { stdio: ["pipe", "pipe", "inherit"] }),
  );
  const lineReaders = children.map((child) => {
    const queue: string[] = [];
    const waiters: Array<(line: string) => void> = [];
    readline.createInterface({ input: child.stdout }).on("line", (line) => {
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else queue.push(line);
    });
    return () => new Promise<string>((resolve) => (queue.length > 0 ? resolve(queue.shift()!) : waiters.push(resolve)));
  });
  expect(await Promise.all(lineReaders.map((next) => next()))).toEqual(children.map(() => "ready"));
  for (const child of children) child.stdin.write("go\n");
  const outcomes = await Promise.all(lineReaders.map((next) => next()));
  return { outcomes, children };
}

async function release(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.on("exit", () => resolve());
          child.stdin!.end();
        }),
    ),
  );
}

describe("the embedded database's folder lock", () => {
  let dir: string;
  let lockFile: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "gw-lock-"));
    lockFile = path.join(dir, "gateway.lock");
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  async function contendInProcess(n: number) {
    const results = await Promise.allSettled(Array.from({ length: n }, () => lockDataDir(dir)));
    const won = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected").map((r) => r.reason);
    return { won, refused };
  }

  it("admits exactly one of many concurrent lockDataDir calls in one process", async () => {
    const { won, refused } = await contendInProcess(20);
    expect(won).toHaveLength(1);
    expect(refused).toHaveLength(19);
    for (const reason of refused) {
      expect(reason).toBeInstanceOf(DataDirInUseError);
      expect((reason as DataDirInUseError).pid).toBe(process.pid);
    }
    expect((await readFile(lockFile, "utf8")).trim()).toBe(String(process.pid));
    expect(await readdir(dir)).toEqual(["gateway.lock"]); // no temporary file left behind
    await (won[0] as PromiseFulfilledResult<() => Promise<void>>).value();
    const again = await lockDataDir(dir);
    await again();
  });

  it("lets exactly one of many concurrent calls take over a lock left by a dead process", async () => {
    await writeFile(lockFile, String(await deadPid()));
    const { won, refused } = await contendInProcess(20);
    expect(won).toHaveLength(1);
    expect(refused.every((r) => r instanceof DataDirInUseError && r.pid === process.pid)).toBe(true);
    expect((await readFile(lockFile, "utf8")).trim()).toBe(String(process.pid));
    expect(await readdir(dir)).toEqual(["gateway.lock"]); // no temporary file left behind
    await (won[0] as PromiseFulfilledResult<() => Promise<void>>).value();
  });

  it("counts a lock file without a pid yet as held while it is young, and takes it over when old", async () => {
    await writeFile(lockFile, "");
    const attempt = lockDataDir(dir);
    const outcome = attempt.then(
      () => "locked",
      (error: unknown) => error,
    );
    await sleep(200); // the other process is still writing its pid
    await writeFile(lockFile, String(process.ppid)); // a live process other than this one
    const error = await outcome;
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as DataDirInUseError).pid).toBe(process.ppid);

    await writeFile(lockFile, "");
    const longAgo = new Date(Date.now() - 60_000);
    await utimes(lockFile, longAgo, longAgo);
    const unlock = await lockDataDir(dir);
    expect((await readFile(lockFile, "utf8")).trim()).toBe(String(process.pid));
    await unlock();
  });

  it("admits exactly one of several processes, on a free folder and over a dead process's lock", async () => {
    for (const stale of [false, true]) {
      if (stale) await writeFile(lockFile, String(await deadPid()));
      const { outcomes, children } = await contendFromProcesses(dir, CONTENDERS);
      try {
        expect(outcomes.filter((o) => o === "won")).toHaveLength(1);
        const winner = children[outcomes.indexOf("won")]!.pid;
        expect(outcomes.filter((o) => o === `busy ${winner}`)).toHaveLength(CONTENDERS - 1);
        expect((await readFile(lockFile, "utf8")).trim()).toBe(String(winner));
        expect(await readdir(dir)).toEqual(["gateway.lock"]);
      } finally {
        await release(children);
      }
    }
  });
});
