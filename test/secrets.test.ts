/** Signing secrets at rest: sealed in the database, opened only with the key, legacy rows sealed at start. */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createApp } from "../src/app";
import { createSecretBox } from "../src/clients/secret-box";
import { loadConfig } from "../src/config";
import { ADMIN_KEY, Disposers, silentLogger } from "./support/harness";

const BOOTSTRAP_SECRET = `whsec_${randomBytes(32).toString("base64")}`;

describe("signing secrets at rest", () => {
  const disposers = new Disposers();
  let dataDir: string;
  const env = (extra: Record<string, string> = {}) => ({
    PORT: "0",
    LOG_LEVEL: "silent",
    DATA_DIR: dataDir,
    BOOTSTRAP_API_KEY: ADMIN_KEY,
    BOOTSTRAP_SIGNING_SECRET: BOOTSTRAP_SECRET,
    ...extra,
  });
  const start = async (extra: Record<string, string> = {}) => {
    const app = await createApp(loadConfig(env(extra)), silentLogger);
    disposers.add(() => app.stop());
    return app;
  };
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), "cgw-secrets-"));
    disposers.add(() => rmSync(dataDir, { recursive: true, force: true }));
  });
  afterAll(() => disposers.disposeAll());

  it("stores the secret sealed (AES-GCM), keeps the key outside the database, and signs with the real secret", async () => {
    const app = await start();
    const [row] = await app.database.prisma.client.findMany();
    expect(row!.signingSecret).toMatch(/^v1:[\w-]+:[\w-]+$/);
    expect(row!.signingSecret).not.toContain(BOOTSTRAP_SECRET.slice(6, 20));
    expect(await app.services.clients.signingSecretOf(row!.id)).toBe(BOOTSTRAP_SECRET);
    const keyFile = path.join(dataDir, "secrets.key");
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // A client created later, and a rotated secret, are sealed too.
    const created = await app.services.clients.createClient({ name: "forwarder", callbackPrefixes: ["*"] });
    const { signingSecret: rotated } = await app.services.clients.rotateSigningSecret(created.clientId);
    const stored = await app.database.prisma.client.findUniqueOrThrow({ where: { id: created.clientId } });
    expect(stored.signingSecret.startsWith("v1:")).toBe(true);
    expect(stored.signingSecret).not.toContain(rotated.slice(6));
    expect(await app.services.clients.signingSecretOf(created.clientId)).toBe(rotated);
    // A sealed value that was altered does not open (GCM's tag), rather than yielding a wrong secret.
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal("whsec_abc");
    expect(() => box.open(`${sealed.slice(0, -2)}AA`)).toThrow();
    await app.stop();
  });

  it("seals secrets that an earlier version stored in clear, at the next start", async () => {
    const first = await start();
    const clear = `whsec_${randomBytes(32).toString("base64")}`;
    const { clientId } = await first.services.clients.createClient({ name: "legacy", callbackPrefixes: ["*"] });
    await first.database.prisma.client.update({ where: { id: clientId }, data: { signingSecret: clear } }); // as stored before
    await first.stop();

    const second = await start();
    const row = await second.database.prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(row.signingSecret.startsWith("v1:")).toBe(true);
    expect(await second.services.clients.signingSecretOf(clientId)).toBe(clear);
    await second.stop();
  });

  it("refuses to start with a key that does not open the stored secrets", async () => {
    await expect(start({ SECRETS_KEY: randomBytes(32).toString("base64") })).rejects.toThrow(/sealed with another key/);
  });

  it("refuses a SECRETS_KEY that is not 32 bytes of base64", () => {
    expect(() => loadConfig({ SECRETS_KEY: "short" })).toThrow(/SECRETS_KEY/);
  });
});
