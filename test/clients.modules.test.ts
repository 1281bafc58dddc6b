/**
 * The clients feature's modules, each by itself over one embedded database (the composed service is
 * tested through the app: key-lookup, secrets, secret-rotation, tenants, bootstrap.races).
 */
import { randomBytes } from "node:crypto";
import { Writable } from "node:stream";
import pino from "pino";
import { ensureBootstrapClient } from "../src/clients/bootstrap-client";
import { createClientAdmin } from "../src/clients/client-admin";
import { generateApiKey, hashApiKey, SCOPES } from "../src/clients/credentials";
import { createKeyAuthentication } from "../src/clients/key-authentication";
import { prepareSecrets } from "../src/clients/prepare-secrets";
import { createSecretBox } from "../src/clients/secret-box";
import { createSigningSecretStore, SIGNING_SECRETS_CACHE_MS } from "../src/clients/signing-secret-store";
import { type Database, openDatabase, type Prisma } from "../src/db/database";
import { AppError } from "../src/errors";
import { setWallClock } from "./support/clock";
import { pgliteDump } from "./support/database-templates";
import { silentLogger } from "./support/harness";

const UNKNOWN_ID = "00000000-0000-4000-8000-000000000000";

let database: Database;
let prisma: Prisma;
const secrets = createSecretBox(randomBytes(32));

beforeAll(async () => {
  database = await openDatabase({ kind: "pglite", dataDir: "memory://", dump: pgliteDump() });
  prisma = database.prisma;
}, 120_000);
afterAll(() => database.close());

/** What `work` rejects with, or undefined when it resolves. */
async function refusalOf(work: Promise<unknown>): Promise<unknown> {
  return work.then(
    () => undefined,
    (error: unknown) => error,
  );
}

function adminWith(keysChanged: () => void = () => {}) {
  return createClientAdmin({ prisma, secrets, keysChanged });
}

/**
 * A Prisma client over the same database that counts the key reads (`apiKey.findUnique`) and can
 * hold the next one open once it has read its row.
 */
function countingKeyReads() {
  let reads = 0;
  let held: { reached: () => void; released: Promise<void> } | undefined;
  const counted = prisma.$extends({
    query: {
      apiKey: {
        async findUnique({ args, query }) {
          reads++;
          const row = await query(args);
          const hold = held;
          held = undefined;
          if (hold) {
            hold.reached();
            await hold.released;
          }
          return row;
        },
      },
    },
  }) as unknown as Prisma;
  /** Holds the next read until `release()`; `read` settles once it has read its row. */
  const holdNextRead = () => {
    let release!: () => void;
    const read = new Promise<void>((reached) => {
      held = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
    });
    return { read, release };
  };
  return { prisma: counted, reads: () => reads, holdNextRead };
}

describe("key-authentication.ts", () => {
  it("resolves a key to its client's principal, keeping the scopes it knows", async () => {
    const { clientId } = await adminWith().createClient({
      name: "principal",
      callbackPrefixes: ["https://a.example/hooks/"],
      maxSubscriptions: 7,
    });
    const { key, keyId } = await adminWith().issueKey(clientId, ["subscriptions", "events:read"]);
    await prisma.apiKey.update({ where: { id: keyId }, data: { scopes: ["subscriptions", "events:read", "retired"] } });

    const principal = await createKeyAuthentication(prisma).authenticate(key);
    expect(principal).toEqual({
      clientId,
      keyId,
      scopes: new Set(["subscriptions", "events:read"]),
      callbackPrefixes: ["https://a.example/hooks/"],
      maxSubscriptions: 7,
    });
  });

  it("refuses an unknown key, a key that shares only the stored prefix, and a revoked key", async () => {
    const { clientId } = await adminWith().createClient({ name: "refusals", callbackPrefixes: ["*"] });
    const { key, keyId } = await adminWith().issueKey(clientId, ["subscriptions"]);
    const authentication = createKeyAuthentication(prisma);
    expect(await authentication.authenticate(generateApiKey())).toBeNull();
    expect(await authentication.authenticate(`${key.slice(0, 16)}${generateApiKey().slice(16)}`)).toBeNull();
    await prisma.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    expect(await createKeyAuthentication(prisma).authenticate(key)).toBeNull();
  });

  it("runs beforeLookup only before a read it starts: not for a remembered key, nor for callers joining a read", async () => {
    const { clientId } = await adminWith().createClient({ name: "before lookup", callbackPrefixes: ["*"] });
    const { key } = await adminWith().issueKey(clientId, ["subscriptions"]);
    const counting = countingKeyReads();
    const authentication = createKeyAuthentication(counting.prisma);
    let before = 0;
    const beforeLookup = () => {
      before++;
    };
    const hold = counting.holdNextRead();
    const first = authentication.authenticate(key, beforeLookup);
    await hold.read;
    const joining = Array.from({ length: 4 }, () => authentication.authenticate(key, beforeLookup));
    hold.release();
    const principals = await Promise.all([first, ...joining]);
    expect(principals.every((p) => p?.clientId === clientId)).toBe(true);
    expect([before, counting.reads()]).toEqual([1, 1]);
    await authentication.authenticate(key, beforeLookup);
    expect([before, counting.reads()]).toEqual([1, 1]);
  });

  it("throws what beforeLookup throws, without reading the database", async () => {
    const counting = countingKeyReads();
    const authentication = createKeyAuthentication(counting.prisma);
    const refused = new AppError("RATE_LIMITED", "too many failed attempts");
    const refusal = await refusalOf(
      authentication.authenticate(generateApiKey(), () => {
        throw refused;
      }),
    );
    expect(refusal).toBe(refused);
    expect(counting.reads()).toBe(0);
  });

  it("reads again after forgetAll, and does not remember a read that started before it", async () => {
    const { clientId } = await adminWith().createClient({ name: "forget all", callbackPrefixes: ["*"] });
    const { key } = await adminWith().issueKey(clientId, ["subscriptions"]);
    const counting = countingKeyReads();
    const authentication = createKeyAuthentication(counting.prisma);
    await authentication.authenticate(key);
    authentication.forgetAll();
    await authentication.authenticate(key);
    expect(counting.reads()).toBe(2);

    authentication.forgetAll();
    const hold = counting.holdNextRead();
    const underWay = authentication.authenticate(key);
    await hold.read;
    authentication.forgetAll();
    hold.release();
    expect((await underWay)?.clientId).toBe(clientId);
    await authentication.authenticate(key);
    expect(counting.reads()).toBe(4);
  });

  it("tells a key's standing now: its scopes, whether it is revoked, or null when there is no such key", async () => {
    const { clientId } = await adminWith().createClient({ name: "standing", callbackPrefixes: ["*"] });
    const { key, keyId } = await adminWith().issueKey(clientId, ["events:read"]);
    const authentication = createKeyAuthentication(prisma);
    await authentication.authenticate(key);
    expect(await authentication.keyStatus(keyId)).toEqual({ revoked: false, scopes: new Set(["events:read"]) });
    await prisma.apiKey.update({ where: { id: keyId }, data: { revokedAt: new Date() } });
    expect(await authentication.keyStatus(keyId)).toEqual({ revoked: true, scopes: new Set(["events:read"]) });
    expect(await authentication.keyStatus(UNKNOWN_ID)).toBeNull();
  });
});

describe("client-admin.ts", () => {
  it("creates a client with its name trimmed and its secret sealed, returning the secret", async () => {
    const { clientId, signingSecret } = await adminWith().createClient({
      name: "  forwarder  ",
      callbackPrefixes: ["*", "*"],
    });
    const row = await prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(row).toMatchObject({ name: "forwarder", callbackPrefixes: ["*"], maxSubscriptions: 10_000 });
    expect(signingSecret).toMatch(/^whsec_/);
    expect(secrets.isSealed(row.signingSecret)).toBe(true);
    expect(secrets.open(row.signingSecret)).toBe(signingSecret);
  });

  it("refuses a blank name and bad prefixes, creating nothing", async () => {
    const before = await prisma.client.count();
    expect(await refusalOf(adminWith().createClient({ name: "  ", callbackPrefixes: ["*"] }))).toMatchObject({
      code: "VALIDATION_FAILED",
      errors: [{ field: "name", message: "must not be empty" }],
    });
    expect(await refusalOf(adminWith().createClient({ name: "no prefixes", callbackPrefixes: [] }))).toMatchObject({
      code: "VALIDATION_FAILED",
      errors: [{ field: "callbackPrefixes" }],
    });
    expect(await prisma.client.count()).toBe(before);
  });

  it("issues a key stored only as its hash, finding the client before reading the scopes", async () => {
    const admin = adminWith();
    const { clientId } = await admin.createClient({ name: "keys", callbackPrefixes: ["*"] });
    const { key, keyId } = await admin.issueKey(clientId, ["admin", "admin"], "ops");
    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } });
    expect(row).toMatchObject({
      clientId,
      lookupPrefix: key.slice(0, 16),
      keyHash: hashApiKey(key),
      scopes: ["admin"],
      label: "ops",
    });
    expect(JSON.stringify(row)).not.toContain(key.slice(16));

    for (const unknown of [UNKNOWN_ID, "not-an-id"])
      expect(await refusalOf(admin.issueKey(unknown, ["root"]))).toMatchObject({ code: "CLIENT_NOT_FOUND" });
    expect(await refusalOf(admin.issueKey(clientId, ["root"]))).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await prisma.apiKey.count({ where: { clientId } })).toBe(1);
  });

  it("revokes an active key once, telling authentication each time a key changes", async () => {
    let changes = 0;
    const admin = adminWith(() => changes++);
    const { clientId } = await admin.createClient({ name: "revoked", callbackPrefixes: ["*"] });
    const { keyId } = await admin.issueKey(clientId, ["subscriptions"]);
    await admin.revokeKey(keyId);
    expect(changes).toBe(1);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).toBeInstanceOf(Date);
    for (const gone of [keyId, UNKNOWN_ID, "not-an-id"])
      expect(await refusalOf(admin.revokeKey(gone))).toMatchObject({ code: "NOT_FOUND" });
    expect(changes).toBe(1);
  });

  it("replaces the callback prefixes, telling authentication; refuses bad ones and keeps the old", async () => {
    let changes = 0;
    const admin = adminWith(() => changes++);
    const { clientId } = await admin.createClient({ name: "prefixes", callbackPrefixes: ["*"] });
    expect(await admin.setCallbackPrefixes(clientId, ["https://b.example/", "https://b.example/"])).toEqual([
      "https://b.example/",
    ]);
    expect(changes).toBe(1);
    expect(await refusalOf(admin.setCallbackPrefixes(clientId, ["ftp://b.example/"]))).toMatchObject({
      code: "VALIDATION_FAILED",
    });
    expect(await refusalOf(admin.setCallbackPrefixes(UNKNOWN_ID, ["*"]))).toMatchObject({ code: "CLIENT_NOT_FOUND" });
    expect(changes).toBe(1);
    const row = await prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(row.callbackPrefixes).toEqual(["https://b.example/"]);
  });

  it("lists clients and their keys oldest first, with a previous secret's end only while it is to come", async () => {
    const admin = adminWith();
    const older = await admin.createClient({ name: "older", callbackPrefixes: ["*"] });
    const newer = await admin.createClient({ name: "newer", callbackPrefixes: ["*"] });
    const second = await admin.issueKey(older.clientId, ["events:read"]);
    const first = await admin.issueKey(older.clientId, ["subscriptions"], "first");
    const ends = new Date(Date.now() + 60_000);
    await prisma.client.update({ where: { id: older.clientId }, data: { createdAt: new Date(Date.now() - 2_000) } });
    await prisma.client.update({
      where: { id: newer.clientId },
      data: { createdAt: new Date(Date.now() - 1_000), previousSecretExpiresAt: new Date(Date.now() - 1) },
    });
    await prisma.client.update({ where: { id: older.clientId }, data: { previousSecretExpiresAt: ends } });
    await prisma.apiKey.update({ where: { id: first.keyId }, data: { createdAt: new Date(Date.now() - 5_000) } });

    const listed = (await admin.listClients()).filter((c) => [older.clientId, newer.clientId].includes(c.id));
    expect(listed.map((c) => [c.name, c.previousSecretExpiresAt])).toEqual([
      ["older", ends],
      ["newer", null],
    ]);
    expect(listed[0]!.keys).toEqual([
      {
        id: first.keyId,
        lookupPrefix: first.key.slice(0, 16),
        scopes: ["subscriptions"],
        label: "first",
        createdAt: expect.any(Date),
        revokedAt: null,
      },
      expect.objectContaining({ id: second.keyId, label: null }),
    ]);
  });
});

describe("signing-secret-store.ts", () => {
  afterEach(() => jest.useRealTimers());

  async function clientWithSecret() {
    const { clientId, signingSecret } = await adminWith().createClient({ name: "signing", callbackPrefixes: ["*"] });
    return { clientId, original: signingSecret };
  }

  it("signs with the current secret; after a rotation with both until the grace period ends", async () => {
    const { clientId, original } = await clientWithSecret();
    const store = createSigningSecretStore({ prisma, secrets });
    expect(await store.signingSecretOf(clientId)).toBe(original);
    expect(await store.signingSecretsAt(clientId, new Date())).toEqual([original]);

    const rotated = await store.rotateSigningSecret(clientId, 60);
    expect(rotated.previousSecretExpiresAt.getTime() - Date.now()).toBeGreaterThan(55_000);
    expect(await store.signingSecretOf(clientId)).toBe(rotated.signingSecret);
    expect(await store.signingSecretsAt(clientId, new Date())).toEqual([rotated.signingSecret, original]);
    expect(await store.signingSecretsAt(clientId, rotated.previousSecretExpiresAt)).toEqual([rotated.signingSecret]);
  });

  it("ends the replaced secret at once with grace 0", async () => {
    const { clientId } = await clientWithSecret();
    const store = createSigningSecretStore({ prisma, secrets });
    const { signingSecret } = await store.rotateSigningSecret(clientId, 0);
    expect(await store.signingSecretsAt(clientId, new Date())).toEqual([signingSecret]);
    const row = await prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect([row.previousSigningSecret, row.previousSecretExpiresAt]).toEqual([null, null]);
  });

  it("refuses a grace period outside 0 … 7 days and an unknown client, keeping the secret", async () => {
    const { clientId, original } = await clientWithSecret();
    const store = createSigningSecretStore({ prisma, secrets });
    for (const grace of [-1, 1.5, 7 * 24 * 60 * 60 + 1])
      expect(await refusalOf(store.rotateSigningSecret(clientId, grace))).toMatchObject({
        code: "VALIDATION_FAILED",
        errors: [{ field: "graceSeconds" }],
      });
    expect(await refusalOf(store.rotateSigningSecret(UNKNOWN_ID))).toMatchObject({ code: "CLIENT_NOT_FOUND" });
    expect(await store.signingSecretOf(clientId)).toBe(original);
  });

  it("keeps one of two concurrent rotations as the previous secret, never the one both replaced", async () => {
    const { clientId, original } = await clientWithSecret();
    const store = createSigningSecretStore({ prisma, secrets });
    const [a, b] = await Promise.all([store.rotateSigningSecret(clientId), store.rotateSigningSecret(clientId)]);
    const signing = await store.signingSecretsAt(clientId, new Date());
    expect(signing).toHaveLength(2);
    expect(new Set(signing)).toEqual(new Set([a.signingSecret, b.signingSecret]));
    expect(signing).not.toContain(original);
  });

  it("seals a replaced secret that was stored in clear", async () => {
    const { clientId } = await clientWithSecret();
    const clear = `whsec_${randomBytes(32).toString("base64")}`;
    await prisma.client.update({ where: { id: clientId }, data: { signingSecret: clear } });
    await createSigningSecretStore({ prisma, secrets }).rotateSigningSecret(clientId);
    const row = await prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(secrets.isSealed(row.previousSigningSecret!)).toBe(true);
    expect(secrets.open(row.previousSigningSecret!)).toBe(clear);
  });

  it("reaches another store (another instance) only once what it remembers has expired", async () => {
    const { clientId, original } = await clientWithSecret();
    setWallClock(Date.now());
    const elsewhere = createSigningSecretStore({ prisma, secrets });
    expect(await elsewhere.signingSecretsAt(clientId, new Date())).toEqual([original]);
    const { signingSecret } = await createSigningSecretStore({ prisma, secrets }).rotateSigningSecret(clientId);
    setWallClock(Date.now() + SIGNING_SECRETS_CACHE_MS - 1);
    expect(await elsewhere.signingSecretsAt(clientId, new Date())).toEqual([original]);
    setWallClock(Date.now() + 1);
    expect(await elsewhere.signingSecretsAt(clientId, new Date())).toEqual([signingSecret, original]);
  });
});

describe("bootstrap-client.ts and prepare-secrets.ts (on an empty database)", () => {
  beforeEach(async () => {
    await prisma.client.deleteMany();
  });

  /** A logger whose lines are kept, to show what was logged. */
  function recordingLogger() {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString("utf8"));
        done();
      },
    });
    return { log: pino({ level: "info" }, stream), lines };
  }

  it("creates the first client with every scope from the settings, generating nothing and logging no secret", async () => {
    const apiKey = generateApiKey();
    const signingSecret = `whsec_${randomBytes(32).toString("base64")}`;
    const { log, lines } = recordingLogger();
    const outcome = await ensureBootstrapClient(
      { prisma, log, secrets },
      { apiKey, signingSecret, callbackPrefixes: ["https://ops.example/"] },
    );
    expect(outcome).toEqual({ created: true, clientId: expect.any(String), generated: {} });
    const principal = await createKeyAuthentication(prisma).authenticate(apiKey);
    expect(principal).toMatchObject({ scopes: new Set(SCOPES), callbackPrefixes: ["https://ops.example/"] });
    expect(await createSigningSecretStore({ prisma, secrets }).signingSecretOf(principal!.clientId)).toBe(
      signingSecret,
    );
    expect(lines.join("")).toContain("created the bootstrap client");
    expect(lines.join("")).not.toContain(apiKey);
    expect(lines.join("")).not.toContain(signingSecret.slice(6));

    expect(await ensureBootstrapClient({ prisma, log, secrets }, { callbackPrefixes: ["*"] })).toEqual({
      created: false,
    });
    expect(await prisma.client.count()).toBe(1);
  });

  it("generates the key and the secret that are not set, and returns them", async () => {
    const outcome = await ensureBootstrapClient({ prisma, log: silentLogger, secrets }, { callbackPrefixes: ["*"] });
    if (!outcome.created) throw new Error("not created");
    const { apiKey, signingSecret } = outcome.generated;
    expect([apiKey, signingSecret]).toEqual([expect.stringMatching(/^cgw_/), expect.stringMatching(/^whsec_/)]);
    expect((await createKeyAuthentication(prisma).authenticate(apiKey!))?.clientId).toBe(outcome.clientId);
    expect(await createSigningSecretStore({ prisma, secrets }).signingSecretOf(outcome.clientId)).toBe(signingSecret);
  });

  it("creates nothing when the prefixes are refused", async () => {
    expect(
      await refusalOf(ensureBootstrapClient({ prisma, log: silentLogger, secrets }, { callbackPrefixes: ["nope"] })),
    ).toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await prisma.client.count()).toBe(0);
  });

  it("seals the secrets stored in clear once, and refuses a key that does not open the sealed ones", async () => {
    expect(await prepareSecrets({ prisma, log: silentLogger, secrets })).toEqual({ sealed: 0 });
    const clear = `whsec_${randomBytes(32).toString("base64")}`;
    const { clientId } = await adminWith().createClient({ name: "legacy", callbackPrefixes: ["*"] });
    await prisma.client.update({ where: { id: clientId }, data: { signingSecret: clear } });

    expect(await prepareSecrets({ prisma, log: silentLogger, secrets })).toEqual({ sealed: 1 });
    expect(await prepareSecrets({ prisma, log: silentLogger, secrets })).toEqual({ sealed: 0 });
    const row = await prisma.client.findUniqueOrThrow({ where: { id: clientId } });
    expect(secrets.open(row.signingSecret)).toBe(clear);

    const other = createSecretBox(randomBytes(32));
    expect(await refusalOf(prepareSecrets({ prisma, log: silentLogger, secrets: other }))).toMatchObject({
      message: expect.stringMatching(/sealed with another key/),
    });
  });
});
