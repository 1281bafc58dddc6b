import type { App } from "../src/app";
import { BACKENDS, describeBackend, Disposers, startApp } from "./support/harness";
import { getJson, graphql } from "./support/http";
import { startReceiver } from "./support/receiver";

const AWB = "020-12345675";
const OTHER_AWB = "020-12345686";

/**
 * The edges where the subscription SQL (one statement or script per operation, subscription.store.ts)
 * could answer differently from the checks it replaced: the cap at its limit, updates that cannot
 * apply, reads after a delete, refused input writing nothing, and text that must reach the
 * database as it was sent.
 */
/** The fields this gateway adds to the view (docs/API.md), for a subscription without expiry, enabled. */
const NO_ADDITIONS = { expiresAt: null, disabledAt: null, disabledReason: null };

describe.each(BACKENDS)("subscription SQL edges on %s", (backend) => {
  describeBackend(backend)(`over ${backend}`, () => {
    const disposers = new Disposers();
    let app: App;
    let url: string;
    let base: string;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;

    beforeAll(async () => {
      receiver = await startReceiver();
      disposers.add(() => receiver.close());
      ({ app, url } = await startApp(backend, disposers, { RATE_LIMIT_PER_SECOND: "0", DELIVERY_WORKER: "false" }));
      base = `${url}/carrier/handling/shipment/subscribe`;
    }, 180_000);
    afterAll(() => disposers.disposeAll());

    async function client(name: string, maxSubscriptions?: number) {
      const { clientId } = await app.services.clients.createClient({
        name,
        callbackPrefixes: ["*"],
        ...(maxSubscriptions ? { maxSubscriptions } : {}),
      });
      const { key } = await app.services.clients.issueKey(clientId, ["subscriptions"]);
      const send = (method: string, path: string, body?: unknown) =>
        getJson(`${base}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${key}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const create = async (callback: string, awb = AWB) => send("POST", "", { awb, callback, states: "*" });
      const stored = () => app.database.prisma.subscription.findMany({ where: { clientId }, orderBy: { id: "asc" } });
      return { clientId, key, send, create, stored };
    }

    it("admits creates up to the cap, refuses the next before any OPTIONS, and admits again after a delete", async () => {
      const c = await client("at the cap", 2);
      const first = await c.create(`${receiver.url}/ok/cap/1`);
      expect((await c.create(`${receiver.url}/ok/cap/2`)).status).toBe(201);
      const optionsBefore = receiver.optionsCount();
      expect(await c.create(`${receiver.url}/ok/cap/3`)).toMatchObject({
        status: 409,
        body: {
          code: "SUBSCRIPTION_LIMIT_REACHED",
          limit: 2,
          detail: "This client has 2 subscriptions, its limit; delete some first",
        },
      });
      expect(receiver.optionsCount()).toBe(optionsBefore);
      // At the cap, an existing (AWB, callback) is still named as such: that check comes first.
      expect(await c.create(`${receiver.url}/ok/cap/1`)).toMatchObject({
        status: 409,
        body: { code: "SUBSCRIPTION_EXISTS", subscriptionId: first.body.subscriptionId },
      });
      expect(await c.stored()).toHaveLength(2);

      expect((await c.send("DELETE", `/${first.body.subscriptionId}`)).status).toBe(204);
      expect((await c.create(`${receiver.url}/ok/cap/3`)).status).toBe(201);
      expect(await c.stored()).toHaveLength(2);
    });

    it("answers 404 to an update of a missing subscription or another client's, and changes nothing", async () => {
      const owner = await client("owner");
      const intruder = await client("intruder");
      const created = await owner.create(`${receiver.url}/ok/owned`);
      const id = created.body.subscriptionId as string;
      const before = await owner.stored();
      const body = { AWB: OTHER_AWB, Callback: `${receiver.url}/ok/owned`, States: "DEP" };

      for (const [who, path] of [
        [intruder, `/${id}`],
        [owner, "/00000000-0000-4000-8000-000000000000"],
      ] as const) {
        expect(await who.send("PUT", path, body)).toMatchObject({
          status: 404,
          body: { code: "SUBSCRIPTION_NOT_FOUND" },
        });
        // With a new callback too: still 404, and no OPTIONS for a subscription that is not there.
        const optionsBefore = receiver.optionsCount();
        expect(await who.send("PUT", path, { ...body, Callback: `${receiver.url}/ok/elsewhere` })).toMatchObject({
          status: 404,
          body: { code: "SUBSCRIPTION_NOT_FOUND" },
        });
        expect(receiver.optionsCount()).toBe(optionsBefore);
      }
      expect(await owner.stored()).toEqual(before);
      expect(await intruder.stored()).toEqual([]);
      expect((await owner.send("GET", `/${id}`)).body).toEqual(created.body);
    });

    it("updates in place keeping the callback (no OPTIONS), and re-checks a new one, refusing a duplicate before it", async () => {
      const c = await client("updates");
      const kept = await c.create(`${receiver.url}/ok/upd/1`);
      const other = await c.create(`${receiver.url}/ok/upd/2`);
      const id = kept.body.subscriptionId as string;
      const { createdAt, updatedAt } = (await c.stored()).find((s) => s.id === id)!;

      let optionsBefore = receiver.optionsCount();
      expect(
        await c.send("PUT", `/${id}`, { AWB: OTHER_AWB, Callback: `${receiver.url}/ok/upd/1`, States: "arr,DEP" }),
      ).toEqual(
        expect.objectContaining({
          status: 200,
          body: {
            subscriptionId: id,
            AWB: OTHER_AWB,
            Callback: `${receiver.url}/ok/upd/1`,
            States: "DEP,ARR",
            ...NO_ADDITIONS,
          },
        }),
      );
      expect(receiver.optionsCount()).toBe(optionsBefore);
      const row = (await c.stored()).find((s) => s.id === id)!;
      expect(row.createdAt).toEqual(createdAt);
      expect(row.updatedAt.getTime()).toBeGreaterThanOrEqual(updatedAt.getTime());

      // Onto the other subscription's (AWB, callback): 409 naming it, before any OPTIONS.
      const before = await c.stored();
      optionsBefore = receiver.optionsCount();
      expect(await c.send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/upd/2`, States: "*" })).toMatchObject({
        status: 409,
        body: { code: "SUBSCRIPTION_EXISTS", subscriptionId: other.body.subscriptionId },
      });
      expect(receiver.optionsCount()).toBe(optionsBefore);
      // A new callback whose OPTIONS answer lacks POST: 422, nothing written.
      expect(
        await c.send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/no-post/upd`, States: "*" }),
      ).toMatchObject({ status: 422, body: { code: "CALLBACK_INVALID" } });
      expect(receiver.optionsCount()).toBe(optionsBefore + 1);
      expect(await c.stored()).toEqual(before);

      // A new callback that passes: checked once, written.
      expect(await c.send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/upd/3`, States: "*" })).toMatchObject({
        status: 200,
        body: { Callback: `${receiver.url}/ok/upd/3`, States: "*" },
      });
      expect(receiver.optionsCount()).toBe(optionsBefore + 2);
    });

    it("answers 404 to reads, updates and deletes of a deleted subscription, and lists it no more", async () => {
      const c = await client("deleted");
      const created = await c.create(`${receiver.url}/ok/gone`);
      const id = created.body.subscriptionId as string;
      expect((await c.send("DELETE", `/${id}`)).status).toBe(204);

      expect(await c.send("GET", `/${id}`)).toMatchObject({ status: 404, body: { code: "SUBSCRIPTION_NOT_FOUND" } });
      expect(await c.send("DELETE", `/${id}`)).toMatchObject({ status: 404, body: { code: "SUBSCRIPTION_NOT_FOUND" } });
      expect(await c.send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/gone`, States: "*" })).toMatchObject({
        status: 404,
        body: { code: "SUBSCRIPTION_NOT_FOUND" },
      });
      expect((await c.send("GET", "")).body).toEqual([]);
      const read = await graphql(
        url,
        `
          query ($id: ID!) {
            subscription(id: $id) {
              subscriptionId
            }
          }
        `,
        { id },
        {
          authorization: `Bearer ${c.key}`,
        },
      );
      expect(read).toEqual({ data: { subscription: null } });
      const deleted = await graphql(
        url,
        `
          mutation ($id: ID!) {
            deleteSubscription(id: $id) {
              subscriptionId
            }
          }
        `,
        { id },
        {
          authorization: `Bearer ${c.key}`,
        },
      );
      expect(deleted.errors?.[0]?.extensions?.code).toBe("SUBSCRIPTION_NOT_FOUND");
    });

    it("changes nothing when a create or an update is refused as invalid", async () => {
      const c = await client("invalid");
      const created = await c.create(`${receiver.url}/ok/valid`);
      const id = created.body.subscriptionId as string;
      const before = await c.stored();
      const optionsBefore = receiver.optionsCount();

      expect(await c.send("POST", "", { awb: "nope", callback: `${receiver.url}/ok/x`, states: "*" })).toMatchObject({
        status: 400,
        body: { code: "VALIDATION_FAILED" },
      });
      expect(await c.send("PUT", `/${id}`, { AWB, Callback: `${receiver.url}/ok/other`, States: "XYZ" })).toMatchObject(
        { status: 400, body: { code: "VALIDATION_FAILED" } },
      );
      expect(await c.send("PUT", `/${id}`, { AWB, Callback: "ftp://example.com/x", States: "*" })).toMatchObject({
        status: 422,
        body: { code: "CALLBACK_INVALID" },
      });
      expect(receiver.optionsCount()).toBe(optionsBefore);
      expect(await c.stored()).toEqual(before);
    });

    it("stores a callback with quotes and backslashes exactly as normalised, and finds it by it", async () => {
      const c = await client("quoting", 5);
      const callback = `${receiver.url}/ok/o'hare';--?q=back\\slash\\'`;
      const normalised = new URL(callback).href;
      expect(normalised).toContain("'"); // in the path the quote stays a quote, the query keeps the backslashes
      expect(normalised).toContain("\\");
      const created = await c.create(callback);
      expect(created).toMatchObject({ status: 201, body: { Callback: normalised } });
      expect((await c.send("GET", `/${created.body.subscriptionId}`)).body.Callback).toBe(normalised);
      expect((await c.stored()).map((s) => s.callback)).toEqual([normalised]);
      const listed = await c.send("GET", `?callback=${encodeURIComponent(callback)}`);
      expect(listed.body.map((s: { subscriptionId: string }) => s.subscriptionId)).toEqual([
        created.body.subscriptionId,
      ]);
      // The same text again is the same subscription, and still counts against the cap as one.
      expect(await c.create(callback)).toMatchObject({ status: 409, body: { code: "SUBSCRIPTION_EXISTS" } });
    });

    it("pages the list in creation order, filtered, with the same rows as the REST list", async () => {
      const c = await client("paging");
      for (let i = 0; i < 5; i++) expect((await c.create(`${receiver.url}/ok/page/${i}`)).status).toBe(201);
      expect((await c.create(`${receiver.url}/ok/page/0`, OTHER_AWB)).status).toBe(201);
      const all = (await c.send("GET", `?awb=${AWB}`)).body.map((s: { subscriptionId: string }) => s.subscriptionId);
      expect(all).toHaveLength(5);

      const paged: string[] = [];
      let after: string | null = null;
      let pages = 0;
      do {
        const page: {
          data: { subscriptions: { items: Array<{ subscriptionId: string }>; nextCursor: string | null } };
        } = (await graphql(
          url,
          `
            query ($awb: String, $after: String) {
              subscriptions(awb: $awb, first: 2, after: $after) {
                items {
                  subscriptionId
                }
                nextCursor
              }
            }
          `,
          { awb: AWB, after },
          { authorization: `Bearer ${c.key}` },
        )) as never;
        paged.push(...page.data.subscriptions.items.map((s) => s.subscriptionId));
        after = page.data.subscriptions.nextCursor;
        pages++;
      } while (after);
      expect(pages).toBe(3);
      expect(paged).toEqual(all);
      const stored = (await c.stored()).filter((s) => s.awb === AWB);
      const byCreation = [...stored].sort(
        (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1),
      );
      expect(paged).toEqual(byCreation.map((s) => s.id));
    });
  });
});
