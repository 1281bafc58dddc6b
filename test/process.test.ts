import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import WebSocket from "ws";
import { MAIN_JS, spawnServer } from "./support/process";

describe("the server process", () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-data-"));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("on SIGTERM finishes the request in flight, closes websockets with 1001, and exits 0", async () => {
    const server = await spawnServer({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: "cgw_process-test-key-000001" });
    expect(server.logs.some((l) => l.msg === "applied database migrations")).toBe(true);

    const socket = new WebSocket(`${server.url.replace("http", "ws")}/graphql`, "graphql-transport-ws");
    await new Promise((resolve, reject) => socket.once("open", resolve).once("error", reject));
    socket.send(JSON.stringify({ type: "connection_init", payload: { authorization: "Bearer cgw_process-test-key-000001" } }));
    await new Promise((resolve) => socket.once("message", resolve));
    const socketClosed = new Promise<number>((resolve) => socket.once("close", (code) => resolve(code)));

    // A request whose body is only half sent when the signal arrives.
    const body = JSON.stringify({ query: "{ health { status } }" });
    const half = Math.floor(body.length / 2);
    const response = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${server.url}/graphql`, { method: "POST", headers: { "content-type": "application/json", "content-length": body.length } }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
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

    await expect(response).resolves.toEqual({ status: 200, body: JSON.stringify({ data: { health: { status: "ready" } } }) + "\n" });
    await expect(socketClosed).resolves.toBe(1001);
    await expect(server.exited).resolves.toBe(0);
    expect(server.logs.some((l) => l.msg === "stopped")).toBe(true);
  });

  it("restarts on the same embedded database without re-applying migrations", async () => {
    const server = await spawnServer({ DATA_DIR: dataDir });
    expect(server.logs.some((l) => l.msg === "applied database migrations")).toBe(false);
    const ready = await fetch(`${server.url}/readyz`);
    expect(ready.status).toBe(200);
    server.child.kill("SIGTERM");
    await expect(server.exited).resolves.toBe(0);
  });

  it("refuses to start with a bad variable, naming it", () => {
    const result = spawnSync(process.execPath, [MAIN_JS], { env: { PATH: process.env.PATH ?? "", PORT: "http" }, encoding: "utf8" });
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

  it("is created once on an empty database, its generated key and secret printed that once", async () => {
    const first = await spawnServer({ DATA_DIR: dataDir });
    const line = first.logs.find((l) => l.msg?.toString().startsWith("created the bootstrap client"))!;
    expect(line).toBeDefined();
    expect(line.bootstrapSigningSecret).toMatch(/^whsec_/);
    const key = String(line.bootstrapApiKey);
    const answer = await fetch(`${first.url}/carrier/handling/shipment/subscribe`, { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
    first.child.kill("SIGTERM");
    await first.exited;

    const second = await spawnServer({ DATA_DIR: dataDir, BOOTSTRAP_API_KEY: "cgw_ignored-because-a-client-exists" });
    expect(second.logs.some((l) => String(l.msg).startsWith("created the bootstrap client"))).toBe(false);
    const still = await fetch(`${second.url}/carrier/handling/shipment/subscribe`, { headers: { authorization: `Bearer ${key}` } });
    expect(still.status).toBe(200);
    second.child.kill("SIGTERM");
    await second.exited;
  });

  it("takes its key and secret from BOOTSTRAP_API_KEY and BOOTSTRAP_SIGNING_SECRET and never logs them", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "gw-boot2-"));
    const server = await spawnServer({ DATA_DIR: dir, BOOTSTRAP_API_KEY: "cgw_operator-chosen-key-123", BOOTSTRAP_SIGNING_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });
    expect(JSON.stringify(server.logs)).not.toContain("operator-chosen-key");
    expect(JSON.stringify(server.logs)).not.toContain("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
    expect((await fetch(`${server.url}/carrier/handling/shipment/subscribe`, { headers: { authorization: "Bearer cgw_operator-chosen-key-123" } })).status).toBe(200);
    server.child.kill("SIGTERM");
    await server.exited;
    await rm(dir, { recursive: true, force: true });
  });
});
