import { randomBytes } from "node:crypto";
import type { App } from "../src/app";
import { createClientService } from "../src/clients/client.service";
import { createSecretBox } from "../src/clients/secret-box";
import type { Prisma } from "../src/db/database";
import { BACKENDS, describeBackend, Disposers, silentLogger, startApp } from "./support/harness";
import { getJson } from "./support/http";
import { startReceiver } from "./support/receiver";

const AWB = "020-12345675";

/**
 * The Prisma client, except that the API key lookup after `hold()` reads the row at once but hands it
 * back only on `release()`: an authentication whose read happened before a change committed and whose
 * answer arrives after it.
 */
function holdingKeyLookups(prisma: Prisma) {
  let armed: { read: () => void; gate: Promise<void> } | undefined;
  const apiKey = new Proxy(prisma.apiKey, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property !== "findUnique" || armed === undefined) return value;
      const { read, gate } = armed;
      armed = undefined;
      return async (args: Parameters<Prisma["apiKey"]["findUnique"]>[0]) => {
        const row = await target.findUnique(args);
        read();
        await gate;
        return row;
      };
    },
  });
  const wrapped = new Proxy(prisma, {
    get: (target, property) => (property === "apiKey" ? apiKey : Reflect.get(target, property, target)),
  });
  return {
    prisma: wrapped,
    hold() {
      let read!: () => void;
      let release!: () => void;
      const wasRead = new Promise<void>((resolve) => (read = resolve));
      const gate = new Promise<void>((resolve) => (release = resolve));
      armed = { read, gate };
      return { wasRead, release };
    },
  };
}

describe.each(BACKENDS)("review fixes: races on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      let url: string;
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0" }));
      base = `${url}/carrier/handling/shipment/subscribe`;
    }, 180_000);
    afterAll(() => disposers.disposeAll());

    describe("a key revoked while an authentication of it is in flight", () => {
      function clientService() {
        const held = holdingKeyLookups(app.database.prisma);
        const clients = createClientService({
          prisma: held.prisma,
          log: silentLogger,
          secrets: createSecretBox(randomBytes(32)),
        });
        return { clients, hold: () => held.hold() };
      }

      it("is refused by the next authentication on the instance that revoked it", async () => {
        const { clients, hold } = clientService();
        const { clientId } = await clients.createClient({ name: "revoked in flight", callbackPrefixes: ["*"] });
        const { key, keyId } = await clients.issueKey(clientId, ["subscriptions"]);
        const held = hold();
        const inFlight = clients.authenticate(key); // reads the key while it is still valid
        await held.wasRead;
        await clients.revokeKey(keyId);
        held.release();
        await inFlight;
        expect(await clients.authenticate(key)).toBeNull();
      });

      it("shows new callback prefixes to the next authentication", async () => {
        const { clients, hold } = clientService();
        const { clientId } = await clients.createClient({ name: "prefixes in flight", callbackPrefixes: ["*"] });
        const { key } = await clients.issueKey(clientId, ["subscriptions"]);
        const held = hold();
        const inFlight = clients.authenticate(key);
        await held.wasRead;
        await clients.setCallbackPrefixes(clientId, ["https://example.com/hooks/"]);
        held.release();
        await inFlight;
        expect((await clients.authenticate(key))?.callbackPrefixes).toEqual(["https://example.com/hooks/"]);
      });
    });

    it("admits exactly one of concurrent creates at the subscription cap minus one", async () => {
      const cap = 3;
      const contenders = 8;
      const { clientId } = await app.services.clients.createClient({
        name: "capped",
        callbackPrefixes: ["*"],
        maxSubscriptions: cap,
      });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      const create = (callback: string) =>
        getJson(base, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
          body: JSON.stringify({ awb: AWB, callback: `${receiver.url}/ok/${callback}`, states: "*" }),
        });
      for (let i = 0; i < cap - 1; i++) expect((await create(`capped/${i}`)).status).toBe(201);

      const results = await Promise.all(Array.from({ length: contenders }, (_, i) => create(`capped/race-${i}`)));
      expect(results.filter((r) => r.status === 201)).toHaveLength(1);
      const refused = results.filter((r) => r.status !== 201);
      expect(refused).toHaveLength(contenders - 1);
      for (const r of refused) {
        expect(r).toMatchObject({
          status: 409,
          body: {
            code: "SUBSCRIPTION_LIMIT_REACHED",
            limit: cap,
            detail: `This client has ${cap} subscriptions, its limit; delete some first`,
          },
        });
      }
      expect(await app.database.prisma.subscription.count({ where: { clientId } })).toBe(cap);

      // The order of checks stays: an existing subscription is still SUBSCRIPTION_EXISTS at the cap.
      const again = await create("capped/0");
      expect(again).toMatchObject({ status: 409, body: { code: "SUBSCRIPTION_EXISTS" } });
    });
  });
});
