/**
 * SSRF at delivery time: the address policy is applied when the connection is made (not only when
 * the URL was stored), and redirects are never followed — a callback cannot steer the gateway inward.
 * (Refusals at subscribe time, for every forbidden address form, are in subscriptions.http.test.ts.)
 */
import { ADMIN_KEY, Disposers, startApp } from "./support/harness";
import { postJson } from "./support/http";
import { startReceiver } from "./support/receiver";
import { until } from "./support/webhooks";

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

describe("SSRF defences when notifications are sent", () => {
  const disposers = new Disposers();
  afterAll(() => disposers.disposeAll());

  it("refuses to connect to a loopback address even for a subscription already stored (as after a DNS change)", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { app, url } = await startApp("pglite", disposers, {
      ALLOW_PRIVATE_CALLBACKS: "false",
      DELIVERY_RETRY_SCHEDULE: "1s",
      DELIVERY_POLL_MS: "50",
    });
    const [client] = await app.database.prisma.client.findMany();
    // Stored directly: the URL passed verification once; now it leads to a loopback address.
    const subscription = await app.database.prisma.subscription.create({
      data: { clientId: client!.id, awb: "020-12345675", callback: `${receiver.url}/ok/inward`, states: ["*"] },
    });
    expect(
      (await postJson(`${url}/carrier/handling/shipment/events`, { awb: "020-12345675", state: "DEP" }, admin)).status,
    ).toBe(202);
    await until(
      async () =>
        (await app.database.prisma.delivery.findFirst({ where: { subscriptionId: subscription.id } }))?.status ===
        "DEAD",
      { what: "the delivery given up" },
    );
    const delivery = await app.database.prisma.delivery.findFirstOrThrow({
      where: { subscriptionId: subscription.id },
      include: { attempts: true },
    });
    expect(delivery.attempts.length).toBeGreaterThan(0);
    expect(
      delivery.attempts.every(
        (a) => a.statusCode === null && /forbidden|not allowed|private|loopback/i.test(a.error ?? ""),
      ),
    ).toBe(true);
    expect(receiver.posts).toEqual([]);
  });

  it("does not follow a redirect from a callback: the redirect target receives nothing", async () => {
    const receiver = await startReceiver();
    disposers.add(() => receiver.close());
    const { url } = await startApp("pglite", disposers, { DELIVERY_RETRY_SCHEDULE: "1s,1s", DELIVERY_POLL_MS: "50" });
    const created = await postJson(
      `${url}/carrier/handling/shipment/subscribe`,
      { awb: "020-12345675", callback: `${receiver.url}/ok/redirecting`, states: "*" },
      admin,
    );
    expect(created.status).toBe(201);
    receiver.setPostStatus(307, { location: `${receiver.url}/ok/target` });
    await postJson(`${url}/carrier/handling/shipment/events`, { awb: "020-12345675", state: "ARR" }, admin);
    await until(() => receiver.posts.filter((p) => p.path === "/ok/redirecting").length >= 2, {
      what: "a retry after the redirect answer",
    });
    expect(receiver.posts.filter((p) => p.path === "/ok/target")).toEqual([]);
  });
});
