import { randomBytes } from "node:crypto";
import type { App } from "../src/app";
import { createClientService } from "../src/clients/client.service";
import { createSecretBox } from "../src/clients/secret-box";
import type { Prisma } from "../src/db/database";
import { BACKENDS, describeBackend, Disposers, silentLogger, startApp } from "./support/harness";

/**
 * The principal's key lookup: remembered, and shared by concurrent authentications of one key, with
 * a revocation reaching the next authentication at once. Lookups are counted as the queries that
 * reach the database (a Prisma query extension around the real client).
 */
describe.each(BACKENDS)("API key lookups on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;

    beforeAll(async () => {
      ({ app } = await startApp(backend, disposers, { DELIVERY_WORKER: "false" }));
    }, 180_000);
    afterAll(() => disposers.disposeAll());

    function countingClients() {
      let lookups = 0;
      let holdNext: { reached: () => void; released: Promise<void> } | undefined;
      const prisma = app.database.prisma.$extends({
        query: {
          apiKey: {
            async findUnique({ args, query }) {
              lookups++;
              const row = await query(args);
              const hold = holdNext;
              holdNext = undefined;
              if (hold) {
                hold.reached();
                await hold.released;
              }
              return row;
            },
          },
        },
      }) as unknown as Prisma;
      const clients = createClientService({ prisma, log: silentLogger, secrets: createSecretBox(randomBytes(32)) });
      /** Holds the next lookup open once it has read its row, until `release()`; `read` settles when it has. */
      const holdNextLookup = () => {
        let release!: () => void;
        const read = new Promise<void>((reached) => {
          holdNext = { reached, released: new Promise<void>((resolve) => (release = resolve)) };
        });
        return { read, release };
      };
      return { clients, lookups: () => lookups, holdNextLookup };
    }

    it("reads a key once for many concurrent authentications, then answers from memory", async () => {
      const { clients, lookups } = countingClients();
      const { clientId } = await clients.createClient({ name: "one read", callbackPrefixes: ["*"] });
      const { key, keyId } = await clients.issueKey(clientId, ["subscriptions"]);

      const principals = await Promise.all(Array.from({ length: 50 }, () => clients.authenticate(key)));
      expect(lookups()).toBe(1);
      expect(new Set(principals.map((p) => p?.keyId))).toEqual(new Set([keyId]));
      await Promise.all(Array.from({ length: 50 }, () => clients.authenticate(key)));
      expect(lookups()).toBe(1);
    });

    it("reads an unknown key once for concurrent authentications, and again for the next ones", async () => {
      const { clients, lookups } = countingClients();
      const unknown = `cgw_${randomBytes(32).toString("base64url")}`;
      expect(await Promise.all(Array.from({ length: 20 }, () => clients.authenticate(unknown)))).toEqual(
        Array.from({ length: 20 }, () => null),
      );
      expect(lookups()).toBe(1);
      // A refusal is not remembered: a key issued later must work at once.
      expect(await clients.authenticate(unknown)).toBeNull();
      expect(lookups()).toBe(2);
    });

    it("refuses a revoked key at once while a lookup that read it before is under way, and does not remember that read", async () => {
      const { clients, lookups, holdNextLookup } = countingClients();
      const { clientId } = await clients.createClient({ name: "revoked", callbackPrefixes: ["*"] });
      const { key, keyId } = await clients.issueKey(clientId, ["subscriptions"]);

      // A lookup that has read the key, still active, and is held before it answers.
      const hold = holdNextLookup();
      const before = clients.authenticate(key);
      await hold.read;
      await clients.revokeKey(keyId);
      // Authentications after the revocation must not join the held lookup: they share a read of their
      // own and answer while it is still held. Bounded, so that a join fails here instead of hanging.
      const after = Promise.all(Array.from({ length: 20 }, () => clients.authenticate(key)));
      let timer: NodeJS.Timeout | undefined;
      const stillWaiting = new Promise<"still waiting">((resolve) => {
        timer = setTimeout(() => resolve("still waiting"), 5_000);
      });
      try {
        expect(await Promise.race([after, stillWaiting])).toEqual(Array.from({ length: 20 }, () => null));
      } finally {
        clearTimeout(timer);
        hold.release();
      }
      expect(lookups()).toBe(2);

      // The held lookup answers from its read, but the key is not remembered from it.
      expect(await before).not.toBeNull();
      expect(await clients.authenticate(key)).toBeNull();
      expect(lookups()).toBe(3);
    });

    it("shares a failed read with the authentications waiting on it, and reads again afterwards", async () => {
      let lookups = 0;
      let failNext = true;
      const prisma = app.database.prisma.$extends({
        query: {
          apiKey: {
            async findUnique({ args, query }) {
              lookups++;
              // The real query, on a table that does not exist: a database failure, not a stand-in.
              if (failNext) {
                failNext = false;
                await app.database.prisma.$queryRawUnsafe("SELECT * FROM no_such_table");
              }
              return query(args);
            },
          },
        },
      }) as unknown as Prisma;
      const clients = createClientService({ prisma, log: silentLogger, secrets: createSecretBox(randomBytes(32)) });
      const { clientId } = await clients.createClient({ name: "failing read", callbackPrefixes: ["*"] });
      const { key } = await clients.issueKey(clientId, ["subscriptions"]);

      const results = await Promise.allSettled(Array.from({ length: 10 }, () => clients.authenticate(key)));
      expect(results.map((r) => r.status)).toEqual(Array.from({ length: 10 }, () => "rejected"));
      expect(lookups).toBe(1);
      expect(await clients.authenticate(key)).not.toBeNull();
      expect(lookups).toBe(2);
    });
  });
});
