import { spawnSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { getJson } from "./support/http";
import { spawnServer } from "./support/process";

const script = path.resolve(__dirname, "../dist/scripts/admin.js");

describe("npm run admin", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "gw-admin-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  const admin = (...args: string[]) =>
    spawnSync(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? "", DATA_DIR: dir, LOG_LEVEL: "silent" },
      encoding: "utf8",
    });

  it("creates a client, issues a key that the server accepts, and revokes it", async () => {
    const created = admin(
      "client:create",
      "--name",
      "Forwarder One",
      "--prefixes",
      "https://f1.example/hooks/,https://f1.example/alt/",
    );
    expect(created.stderr).toBe("");
    const clientId = /client ([0-9a-f-]{36})/.exec(created.stdout)![1]!;
    expect(created.stdout).toMatch(/signing secret \(shown once\): whsec_/);

    const issued = admin("key:issue", "--client", clientId, "--scopes", "subscriptions,events:read", "--label", "ops");
    const key = /API key \(shown once\): (\S+)/.exec(issued.stdout)![1]!;
    const keyId = /key id ([0-9a-f-]{36})/.exec(issued.stdout)![1]!;

    const listed = admin("clients");
    expect(listed.stdout).toContain("Forwarder One");
    expect(listed.stdout).toContain(`${key.slice(0, 16)}…  subscriptions,events:read  "ops"`);
    expect(listed.stdout).not.toContain(key);

    expect(admin("prefixes:set", "--client", clientId, "--prefixes", "https://f1.example/v2/").stdout).toContain(
      "prefixes: https://f1.example/v2/",
    );
    const rotatedDefault = admin("secret:rotate", "--client", clientId).stdout;
    expect(rotatedDefault).toMatch(/signing secret \(shown once\): whsec_/);
    const until = Date.parse(/previous secret signs too until (\S+)/.exec(rotatedDefault)![1]!);
    expect(Math.abs(until - (Date.now() + 86_400_000))).toBeLessThan(60_000);
    expect(admin("secret:rotate", "--client", clientId, "--grace", "0").stdout).toContain("previous secret ended now");

    const server = await spawnServer({ DATA_DIR: dir });
    try {
      const ok = await getJson(`${server.url}/carrier/handling/shipment/subscribe`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(ok).toMatchObject({ status: 200, body: [] });
    } finally {
      server.child.kill("SIGTERM");
      await server.exited;
    }
    expect(admin("key:revoke", "--key", keyId).stdout).toContain("revoked");
    const server2 = await spawnServer({ DATA_DIR: dir });
    try {
      const refused = await getJson(`${server2.url}/carrier/handling/shipment/subscribe`, {
        headers: { authorization: `Bearer ${key}` },
      });
      expect(refused.status).toBe(401);
    } finally {
      server2.child.kill("SIGTERM");
      await server2.exited;
    }
  }, 180_000); // a dozen CLI runs and two server starts, each opening the embedded database

  it("on a new data folder, names it as new and shows the first client's key and secret once; the key works", async () => {
    const fresh = await mkdtemp(path.join(os.tmpdir(), "gw-admin-fresh-"));
    const folder = path.join(fresh, "data");
    const inFolder = (...args: string[]) =>
      spawnSync(process.execPath, [script, ...args], {
        env: { PATH: process.env.PATH ?? "", DATA_DIR: folder, LOG_LEVEL: "silent" },
        encoding: "utf8",
      });
    try {
      const first = inFolder("clients");
      expect(first.status).toBe(0);
      expect(first.stdout.split("\n")[0]).toBe(
        `database: a NEW embedded database at ${folder} (DATA_DIR): if your gateway keeps its data elsewhere, run this again with its DATA_DIR or DATABASE_URL`,
      );
      const key = /API key {10}(cgw_\S+)/.exec(first.stdout)?.[1];
      expect(first.stdout).toMatch(/Signing secret {3}whsec_\S+/);
      expect(key).toBeDefined();

      const again = inFolder("clients");
      expect(again.stdout.split("\n")[0]).toBe(`database: embedded, at ${folder} (DATA_DIR)`);
      expect(again.stdout).not.toContain("API key");

      const server = await spawnServer({ DATA_DIR: folder });
      try {
        const ok = await getJson(`${server.url}/carrier/handling/shipment/subscribe`, {
          headers: { authorization: `Bearer ${key!}` },
        });
        expect(ok.status).toBe(200);
        expect(server.output.join("\n")).not.toContain("First start"); // shown by the CLI, not again
      } finally {
        server.child.kill("SIGTERM");
        await server.exited;
      }
    } finally {
      await rm(fresh, { recursive: true, force: true });
    }
  }, 120_000);

  it("explains its usage and refuses bad input", () => {
    expect(admin().status).toBe(2);
    expect(admin("frobnicate").stderr).toContain('unknown command "frobnicate"');
    expect(admin("key:issue", "--client", "x").stderr).toContain("key:issue needs --scopes");
    const badScope = admin(
      "key:issue",
      "--client",
      "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a",
      "--scopes",
      "subscriptions",
    );
    expect(badScope.status).toBe(1);
    expect(badScope.stderr).toContain("CLIENT_NOT_FOUND");
    const clientId = /client ([0-9a-f-]{36})/.exec(
      admin("client:create", "--name", "x", "--prefixes", "*").stdout,
    )![1]!;
    const wrong = admin("key:issue", "--client", clientId, "--scopes", "everything");
    expect(wrong.stderr).toContain("unknown scope(s) everything");
    // An empty --grace is refused rather than read as 0 (which would end the old secret at once).
    const badGrace = admin("secret:rotate", "--client", clientId, "--grace", "");
    expect(badGrace.status).toBe(2);
    expect(badGrace.stderr).toContain('--grace must be a whole number of seconds, got ""');
  });
});
