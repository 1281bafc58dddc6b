/**
 * The block printed when the first client is created: how a lost key is replaced depends on the
 * database. The embedded one is held by the running gateway, so the admin command needs it stopped;
 * on PostgreSQL the printed command works while the gateway runs, and the key it issues is accepted
 * at once.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { firstStartBlock } from "../src/cli";
import { describeBackend, Disposers } from "./support/harness";
import { createPostgresDatabase } from "./support/postgres";
import { spawnServer } from "./support/process";
import { itInFullSuite } from "./support/suite";
import { until } from "./support/webhooks";

const bootstrap = {
  created: true as const,
  clientId: "5f0c6b4e-9d7a-4c55-8a4b-1f2e3d4c5b6a",
  generated: { apiKey: "cgw_generated-for-the-test", signingSecret: "whsec_generatedForTheTest" },
};
const where = { url: "http://127.0.0.1:8080" };

describe("the first-start block", () => {
  it("on the embedded database, replaces a lost key with the gateway stopped, given its DATA_DIR", () => {
    const text = firstStartBlock(bootstrap, where, "embedded").join("\n");
    expect(text).toContain("A lost key is replaced with the gateway stopped");
    expect(text).toContain("the gateway's DATA_DIR");
    expect(text).not.toContain("DATABASE_URL");
    expect(text).toContain(`npm run admin -- key:issue --client ${bootstrap.clientId} --scopes`);
  });

  it("on PostgreSQL, replaces a lost key while the gateway runs, given its DATABASE_URL", () => {
    const text = firstStartBlock(bootstrap, where, "postgresql").join("\n");
    expect(text).toContain("A lost key is replaced, while the gateway runs");
    expect(text).toContain("the gateway's DATABASE_URL");
    expect(text).not.toContain("stopped");
    expect(text).not.toContain("DATA_DIR");
    expect(text).toContain(`npm run admin -- key:issue --client ${bootstrap.clientId} --scopes`);
  });

  it("in memory, says the client goes with the gateway and no command can reach it: the GraphQL mutation can", () => {
    const text = firstStartBlock(bootstrap, where, "in memory").join("\n");
    expect(text).toContain("DATA_DIR=memory://");
    expect(text).toContain("gone when the gateway stops");
    expect(text).toContain("issueApiKey");
    expect(text).not.toContain("npm run admin");
    expect(text).not.toContain("with the gateway stopped");
  });
});

describeBackend("postgres")("the first start on PostgreSQL", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  itInFullSuite(
    "prints the key's replacement command, which works while the gateway runs",
    async () => {
      const database = await createPostgresDatabase();
      disposers.add(database.drop);
      const server = await spawnServer({ DATABASE_URL: database.url });
      disposers.add(async () => {
        server.child.kill("SIGTERM");
        await server.exited;
      });
      await until(() => server.output.some((l) => l.includes("REST API docs")), { what: "the first-start block" });
      const block = server.output.filter((l) => !l.startsWith("{")).join("\n");
      expect(block).toContain("A lost key is replaced, while the gateway runs");
      const command = /npm run admin -- (key:issue .+)$/m.exec(block)?.[1];
      expect(command).toBeDefined();

      const issued = spawnSync(
        process.execPath,
        [path.resolve(__dirname, "../dist/scripts/admin.js"), ...command!.trim().split(/\s+/)],
        { env: { PATH: process.env.PATH ?? "", DATABASE_URL: database.url, LOG_LEVEL: "silent" }, encoding: "utf8" },
      );
      expect({ status: issued.status, stderr: issued.stderr }).toEqual({ status: 0, stderr: "" });
      const key = /API key \(shown once\): (\S+)/.exec(issued.stdout)?.[1];
      expect(key).toBeDefined();
      const answer = await fetch(`${server.url}/carrier/handling/shipment/subscribe`, {
        headers: { authorization: `Bearer ${key!}` },
      });
      expect(answer.status).toBe(200);
    },
    60_000,
  );
});
