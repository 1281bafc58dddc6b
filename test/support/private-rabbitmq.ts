/**
 * A RabbitMQ node of a test's own (not the machine's service at 5672), so that a test can stop and
 * start it: its own node name, ports, data directory and Erlang cookie, run from the machine's
 * rabbitmq-server in the foreground as a child of the test. Its queues and persistent messages live
 * in the data directory, so they survive a restart as they would a real broker's.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort, type PrivateService } from "./private-services";

/** The server script of Debian's rabbitmq-server package (the /usr/sbin one re-runs itself as another user). */
export const RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server";

export function privateRabbitAvailable(): boolean {
  return existsSync(RABBITMQ_SERVER);
}

/** Whether something accepts TCP connections on the port. */
const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connectTcp(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });

/**
 * `start` resolves once the node accepts connections; `stop` is an operator's clean stop (SIGTERM, as
 * `rabbitmqctl stop`), waited for; `dispose` stops it and deletes its data.
 */
export async function startPrivateRabbit(): Promise<PrivateService> {
  const port = await freePort();
  const distPort = await freePort();
  const base = mkdtempSync(path.join(os.tmpdir(), "cgw-rabbit-"));
  const node = `cgw${port}@localhost`;
  for (const dir of ["data", "log", "home"]) mkdirSync(path.join(base, dir));
  writeFileSync(path.join(base, "enabled_plugins"), "[].\n");
  writeFileSync(path.join(base, "rabbitmq-env.conf"), "\n");
  // guest may connect over loopback only (RabbitMQ's default), which is where the test connects from.
  writeFileSync(path.join(base, "rabbitmq.conf"), `listeners.tcp.default = 127.0.0.1:${port}\n`);
  const env = {
    ...process.env,
    HOME: path.join(base, "home"), // its own .erlang.cookie
    RABBITMQ_NODENAME: node,
    RABBITMQ_NODE_IP_ADDRESS: "127.0.0.1",
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_MNESIA_BASE: path.join(base, "data"),
    RABBITMQ_MNESIA_DIR: path.join(base, "data", node),
    RABBITMQ_LOG_BASE: path.join(base, "log"),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(base, "enabled_plugins"),
    RABBITMQ_CONF_ENV_FILE: path.join(base, "rabbitmq-env.conf"),
    RABBITMQ_CONFIG_FILE: path.join(base, "rabbitmq.conf"),
    RABBITMQ_PID_FILE: path.join(base, "rabbit.pid"),
    ERL_EPMD_ADDRESS: "127.0.0.1",
  };
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = "";

  async function start(): Promise<void> {
    if (child) return;
    output = "";
    const started = spawn(RABBITMQ_SERVER, [], { env, stdio: ["ignore", "pipe", "pipe"] });
    child = started;
    started.stdout.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000)));
    started.stderr.on("data", (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000)));
    exited = new Promise((resolve) => started.once("exit", () => resolve()));
    void exited.then(() => {
      if (child === started) child = undefined;
    });
    const deadline = Date.now() + 90_000;
    while (!(await accepts(port))) {
      if (child !== started) throw new Error(`the private RabbitMQ node exited while starting:\n${output}`);
      if (Date.now() > deadline) throw new Error(`the private RabbitMQ node did not start in 90 s:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async function stop(): Promise<void> {
    const running = child;
    if (!running) return;
    running.kill("SIGTERM");
    const killed = setTimeout(() => running.kill("SIGKILL"), 60_000);
    await exited;
    clearTimeout(killed);
  }

  return {
    url: `amqp://guest:guest@127.0.0.1:${port}`,
    start,
    stop,
    async dispose() {
      await stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
