import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type ServerProcess, spawnServer } from "../support/process";

/**
 * Without ONE_RECORD_BASE_URL, ONE Record URIs name the listening address: on every interface
 * (0.0.0.0 in a container) partners cannot use them, and the start says so once; on loopback it is a
 * developer's machine and says nothing. Needs `npm run build`.
 */
const WARNING = /^ONE_RECORD_BASE_URL is not set: ONE Record URIs name the listening address/;

describe("the start's warning about ONE Record URIs", () => {
  let dataDir: string;
  const servers: ServerProcess[] = [];
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), "gw-1r-base-"));
  });
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.child.kill("SIGTERM");
      await server.exited;
    }
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const warnings = (server: ServerProcess) =>
    server.logs.filter((line) => typeof line.msg === "string" && WARNING.test(line.msg));

  it("is logged once when the server listens on every interface without ONE_RECORD_BASE_URL", async () => {
    const server = await spawnServer({ DATA_DIR: dataDir, HOST: "0.0.0.0" });
    servers.push(server);
    expect(warnings(server)).toEqual([
      expect.objectContaining({ level: 40, oneRecord: expect.stringMatching(/^http:\/\/0\.0\.0\.0:\d+\/onerecord$/) }),
    ]);
  });

  it("is not logged with ONE_RECORD_BASE_URL set, nor on loopback", async () => {
    const configured = await spawnServer({
      DATA_DIR: dataDir,
      HOST: "0.0.0.0",
      ONE_RECORD_BASE_URL: "https://1r.carrier.example/onerecord",
    });
    servers.push(configured);
    expect(warnings(configured)).toEqual([]);
    configured.child.kill("SIGTERM");
    await configured.exited;
    servers.splice(0);
    const loopback = await spawnServer({ DATA_DIR: dataDir });
    servers.push(loopback);
    expect(warnings(loopback)).toEqual([]);
  });
});
