import net from "node:net";
import readline from "node:readline";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { CHILD_NODE_FLAGS } from "./support/child-node";
import { newEmbeddedDataDir } from "./support/embedded-data-dirs";
import { Disposers } from "./support/harness";
import { MAIN_JS, spawnServer } from "./support/process";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";
import { STOP_DEADLINE_MS } from "../src/process-watchdog";

async function dataDirRemovedBy(disposers: Disposers): Promise<string> {
  const { dir, remove } = await newEmbeddedDataDir();
  disposers.add(remove);
  return dir;
}

describe("the server process", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-data-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("on SIGTERM finishes the request in flight, closes websockets with 1001, and exits 0", async () => {
    const server = await spawnServer({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: "cgw_process-test-key-000001" });
    // A new data folder starts as a copy of the database the build migrated (db/embedded-template.ts).
    expect(server.logs.some((l) => l.msg === "created the embedded database from a migrated copy")).toBe(true);

    const socket = new WebSocket(`${server.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.send(
      JSON.stringify({ type: "connection_init", payload: { authorization: "Bearer cgw_process-test-key-000001" } }),
    );
    await new Promise((resolve) => socket.once("message", resolve));
    const socketClosed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));

    // A request whose body is only half sent when the signal arrives.
    const body = JSON.stringify({ query: "{ health { status } }" });
    const half = Math.floor(body.length / 2);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(
        `${server.url}/graphql`,
        { method: "POST", headers: { "content-type": "application/json", "content-length": body.length } },
        (res) => {
          let text = "";
          res.on("data", (c: Buffer) => (text += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.write(body.slice(0, half));
      // Finish the body only once the server has begun shutting down.
      const waitForStop = setInterval(() => {
        if (server.logs.some((l) => l.msg === "stopping: draining requests and websockets")) {
          clearInterval(waitForStop);
          req.end(body.slice(half));
        }
      }, 10);
    });
    await new Promise((resolve) => setTimeout(resolve, 200)); // let the request reach the server
    server.child.kill("SIGTERM");

    await expect(response).resolves.toEqual({
      status: 200,
      body: JSON.stringify({ data: { health: { status: "ready" } } }) + "\n",
    });
    await expect(socketClosed).resolves.toBe(1001);
    await expect(server.exited).resolves.toBe(0);
    expect(server.logs.some((l) => l.msg === "stopped")).toBe(true);
  });

  it("restarts on the same embedded database without re-applying migrations", async () => {
    const server = await spawnServer({ DATA_DIR: dataDir });
    expect(server.logs.some((l) => l.msg === "applied database migrations")).toBe(false);
    expect(server.logs.some((l) => l.msg === "created the embedded database from a migrated copy")).toBe(false);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    server.child.kill("SIGTERM");
    await expect(server.exited).resolves.toBe(0);
  });

  it("refuses to start with a bad variable, naming it", () => {
    const result = spawnSync(process.execPath, [...CHILD_NODE_FLAGS, MAIN_JS], {
      env: { PATH: process.env.PATH ?? "", PORT: "http" },
      encoding: "utf8",
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain("Invalid configuration: PORT must be a whole number");
  });
});

describe("the bootstrap client", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-boot-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("is created once on an empty database, its generated key and secret printed that once in a block a person can read", async () => {
    const first = await spawnServer({ DATA_DIR: dataDir });
    await until(() => first.output.some((l) => l.includes("REST API docs")), { what: "the first-start block" });
    const block = first.output.filter((l) => !l.startsWith("{")).join("\n");
    const key = /API key +(cgw_\S+)/.exec(block)?.[1];
    expect(key).toBeDefined();
    expect(block).toMatch(/Signing secret +whsec_\S+/);
    expect(block).toContain(`Dashboard        ${first.url}/dashboard`);
    expect(block).toContain(`GraphQL IDE      ${first.url}/graphql`);
    expect(block).toMatch(/npm run admin -- key:issue --client [0-9a-f-]{36} --scopes/);
    // The structured log says a client was created, without the credentials.
    expect(first.logs.some((l) => l.msg === "created the bootstrap client with every scope")).toBe(true);
    expect(JSON.stringify(first.logs)).not.toContain(key);
    const answer = await fetch(`${first.url}/carrier/handling/shipment/subscribe`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(answer.status).toBe(200);
    first.child.kill("SIGTERM");
    await first.exited;

    const second = await spawnServer({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: "cgw_ignored-because-a-client-exists" });
    expect(second.logs.some((l) => String(l.msg).startsWith("created the bootstrap client"))).toBe(false);
    expect(second.output.some((l) => l.includes("First start"))).toBe(false);
    const still = await fetch(`${second.url}/carrier/handling/shipment/subscribe`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(still.status).toBe(200);
    second.child.kill("SIGTERM");
    await second.exited;
  });

  it("takes its key and secret from BOOTSTRAP_API_KEY and BOOTSTRAP_SIGNING_SECRET and never logs them", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "gw-boot2-"));
    const server = await spawnServer({
      DATA_DIR: dir,
      BOOTSTRAP_API_KEY: "cgw_operator-chosen-key-123",
      BOOTSTRAP_SIGNING_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    });
    expect(JSON.stringify(server.logs)).not.toContain("operator-chosen-key");
    expect(JSON.stringify(server.logs)).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect(
      (
        await fetch(`${server.url}/carrier/handling/shipment/subscribe`, {
          headers: { authorization: "Bearer cgw_operator-chosen-key-123" },
        })
      ).status,
    ).toBe(200);
    server.child.kill("SIGTERM");
    await server.exited;
    await rm(dir, { recursive: true, force: true });
  });
});

describe("npm start under a supervisor", () => {
  it("stops the gateway within 10 s when the npm process it started gets SIGTERM: the process gone, the port free", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-npm-"));
    // --ignore-scripts skips prestart's build (the test run has built already); signals take the same path.
    const npm = spawn("npm", ["start", "--ignore-scripts", "--silent"], {
      cwd: path.resolve(__dirname, ".."),
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/root",
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        DATA_DIR: dataDir,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const exited = new Promise<number | string>((resolve) =>
      npm.on("exit", (code, signal) => resolve(code ?? signal ?? -1)),
    );
    const listening = await new Promise<{ url: string; pid: number }>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("npm start did not listen within 30 s")), 30_000);
      readline.createInterface({ input: npm.stdout }).on("line", (line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; url?: string; pid?: number };
          if (entry.msg === "gateway listening") {
            clearTimeout(timer);
            resolve({ url: entry.url!, pid: entry.pid! });
          }
        } catch {
          // the first-start block is not JSON
        }
      });
    });
    expect(listening.pid).not.toBe(npm.pid); // the gateway is npm's child, not npm itself
    const port = Number(new URL(listening.url).port);
    npm.kill("SIGTERM");
    const stoppedBy = Date.now() + 10_000;
    const serverGone = () => {
      try {
        process.kill(listening.pid, 0);
        return false;
      } catch {
        return true;
      }
    };
    const portFree = () =>
      new Promise<boolean>((resolve) => {
        const socket = net.connect(port, "127.0.0.1");
        socket.once("connect", () => (socket.destroy(), resolve(false)));
        socket.once("error", () => resolve(true));
      });
    while (Date.now() < stoppedBy && !(serverGone() && (await portFree())))
      await new Promise((r) => setTimeout(r, 100));
    expect(serverGone()).toBe(true);
    expect(await portFree()).toBe(true);
    await expect(exited).resolves.toBe(0);
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);
});

describe("stopping with a send that never ends", () => {
  const folders = new Disposers();
  afterAll(() => folders.disposeAll());

  it("exits within 10 s of SIGTERM even while a receiver holds a send open (the stop deadline), with code 1", async () => {
    const receiver = await startReceiver();
    const server = await spawnServer({
      DATA_DIR: await dataDirRemovedBy(folders),
      BOOTSTRAP_API_KEY: "cgw_stop-deadline-admin-key-01",
      ALLOW_PRIVATE_CALLBACKS: "true",
    });
    const auth = { authorization: "Bearer cgw_stop-deadline-admin-key-01", "content-type": "application/json" };
    const awb = "020-12345675";
    const subscribed = await fetch(`${server.url}/carrier/handling/shipment/subscribe`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ awb, callback: `${receiver.url}/ok/hang`, states: "*" }),
    });
    expect(subscribed.status).toBe(201);
    await fetch(`${server.url}/carrier/handling/shipment/events`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ awb, state: "DEP" }),
    });
    // The send is under way: the receiver holds its POST open. Had it not started, the stop would be
    // quick and exit 0, and the test would fail, not pass.
    await until(() => receiver.hangingCount() === 1, { what: "the send held open by the receiver" });
    const signalledAt = Date.now();
    server.child.kill("SIGTERM");
    expect(await server.exited).toBe(1);
    // The process timed its own stop: the deadline (8 s) ended it, not the send and not a crash.
    const at = (msg: string) => Date.parse(String(server.logs.find((entry) => entry.msg === msg)?.time));
    const overrun = server.logs.find(
      (entry) => entry.msg === "stopping took too long; exiting without waiting for the rest",
    );
    expect(overrun).toMatchObject({ afterMs: STOP_DEADLINE_MS });
    const stopMs =
      at("stopping took too long; exiting without waiting for the rest") -
      at("stopping: draining requests and websockets");
    expect(stopMs).toBeGreaterThanOrEqual(STOP_DEADLINE_MS);
    // Liveness, in seconds: the late timer runs once the loop turns past the deadline.
    expect(stopMs).toBeLessThan(STOP_DEADLINE_MS + 2_000);
    expect(Date.now() - signalledAt).toBeLessThan(STOP_DEADLINE_MS + 10_000);
    await receiver.close();
  }, 60_000);
});

describe("a start that cannot work", () => {
  const oneLine = (stderr: string) => stderr.trim().split("\n");
  const folders = new Disposers();
  afterAll(() => folders.disposeAll());

  it("says in one line what to do when the data folder is taken: a second gateway, and an admin command (with that command's API instead)", async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-busy-"));
    const first = await spawnServer({ DATA_DIR: dataDir });
    const env = { PATH: process.env.PATH ?? "", PORT: "0", DATA_DIR: dataDir, LOG_LEVEL: "warn" };
    const second = spawnSync(process.execPath, [...CHILD_NODE_FLAGS, MAIN_JS], { env, encoding: "utf8" });
    expect(second.status).toBe(1);
    expect(oneLine(second.stderr)).toEqual([
      `The embedded database in ${dataDir} is in use by process ${first.child.pid} (a running gateway?): stop it, or start this one with another DATA_DIR.`,
    ]);
    const admin = spawnSync(
      process.execPath,
      [path.resolve(__dirname, "../dist/scripts/admin.js"), "key:issue", "--client", "x", "--scopes", "admin"],
      { env, encoding: "utf8" },
    );
    expect(admin.status).toBe(1);
    expect(oneLine(admin.stderr)).toHaveLength(1);
    expect(admin.stderr).toContain("issueApiKey");
    expect(admin.stderr).not.toContain("importStations");
    first.child.kill("SIGTERM");
    await first.exited;
    await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it("says in one line that the port is in use, and exits 1", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    const result = spawnSync(process.execPath, [...CHILD_NODE_FLAGS, MAIN_JS], {
      env: {
        PATH: process.env.PATH ?? "",
        PORT: String(port),
        HOST: "127.0.0.1",
        DATA_DIR: await dataDirRemovedBy(folders),
        LOG_LEVEL: "warn",
      },
      encoding: "utf8",
    });
    taken.close();
    expect(result.status).toBe(1);
    expect(oneLine(result.stderr)).toEqual([
      `Port ${port} on 127.0.0.1 is in use (another gateway, or another program): stop it, or start this one with another PORT.`,
    ]);
  }, 60_000);
});
