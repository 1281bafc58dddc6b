/**
 * Real PostgreSQL and Redis servers that one test owns, on their own ports and folders, so that a
 * test can stop and start them (an outage) without touching the machine's shared services.
 */
import { execFile, execFileSync, spawn } from "node:child_process";
import { chownSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

export interface PrivateService {
  readonly url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  dispose(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

const PG_BIN =
  process.env.PG_BIN ??
  (() => {
    try {
      const version = execFileSync("ls", ["/usr/lib/postgresql"]).toString().trim().split("\n").sort().pop();
      return `/usr/lib/postgresql/${version}/bin`;
    } catch {
      return "/usr/lib/postgresql/15/bin";
    }
  })();

const execFileAsync = promisify(execFile);

/** As the postgres user when run as root (initdb refuses root); rejects when the command fails. */
async function asPostgres(command: string, args: string[]): Promise<void> {
  const [file, argv] =
    process.getuid?.() === 0 ? ["runuser", ["-u", "postgres", "--", command, ...args]] : [command, args];
  await execFileAsync(file, argv);
}

export async function startPrivatePostgres(): Promise<PrivateService> {
  const dir = mkdtempSync(path.join(tmpdir(), "cgw-pg-"));
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString());
    chownSync(dir, uid, gid);
  }
  const data = path.join(dir, "data");
  await asPostgres(`${PG_BIN}/initdb`, ["-D", data, "-A", "trust", "-U", "postgres", "-E", "UTF8", "--no-sync"]);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=50`;
  const service: PrivateService = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async start() {
      await asPostgres(`${PG_BIN}/pg_ctl`, [
        "-D",
        data,
        "-o",
        options,
        "-l",
        path.join(dir, "server.log"),
        "-w",
        "start",
      ]);
    },
    async stop() {
      await asPostgres(`${PG_BIN}/pg_ctl`, ["-D", data, "-m", "fast", "-w", "stop"]);
    },
    async dispose() {
      try {
        await service.stop();
      } catch {
        /* already stopped */
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}

export async function startPrivateRedis(): Promise<PrivateService> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "cgw-redis-"));
  let child: ReturnType<typeof spawn> | undefined;
  const service: PrivateService = {
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir],
        { stdio: "ignore" },
      );
      // Ready once it accepts a PING.
      for (let i = 0; i < 100; i++) {
        try {
          execFileSync("redis-cli", ["-p", String(port), "ping"], { stdio: "pipe" });
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      throw new Error("the private redis-server did not start");
    },
    async stop() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      await new Promise<void>((resolve) => {
        running.once("exit", () => resolve());
        running.kill("SIGTERM");
      });
    },
    async dispose() {
      await service.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await service.start();
  return service;
}
